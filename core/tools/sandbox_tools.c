/* create_sandbox and kill_sandbox, and the session's default sandbox. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/principal.h"
#include "tasks/box.h"
#include "tasks/ownership.h"
#include "tasks/quota.h"
#include "host/provider_stats.h"
#include "tools/sandboxes.h"
#include "tasks/session.h"
#include "tools/tasks.h"
#include "tools/tool.h"
#include "tools/tool_args.h"
#include "host/sandbox_ref.h"

/* Whether who may make a sandbox on inst: a plugin that cannot record an
 * owner makes sandboxes only an admin reaches, so only an admin makes
 * them. */
static int owner_recordable(const struct tb_principal *who,
                            const struct tb_instance *inst, char *err,
                            size_t errlen)
{
	if (inst->plugin->describe || tb_owner_is_admin(who))
		return 0;
	snprintf(err, errlen,
	         "provider: instance %s cannot record a sandbox's owner (its "
	         "plugin %s offers no describe, an op of ABI 1.5), so only a "
	         "principal with taskbox:admin may create sandboxes there",
	         inst->name, inst->plugin->name);
	return -1;
}

/* The plugin's create for who, with the owner recorded. */
static int create_on(const struct tb_principal *who,
                     const struct tb_instance *inst, const char *template_name,
                     uint32_t lifetime_s, char *native, char *err,
                     size_t errlen)
{
	struct taskbox_create_req req;
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	memset(&req, 0, sizeof(req));
	req.struct_size = sizeof(req);
	req.template_name = template_name;
	req.lifetime_s = lifetime_s;
	req.owner = who->name;
	uint64_t t0 = tb_provider_call_start();
	rc = inst->plugin->ops.create(inst->handle, &req, native, perr,
	                              sizeof(perr));
	tb_provider_call_end(TB_POP_CREATE, t0, rc);
	if (rc != TASKBOX_OK) {
		snprintf(err, errlen, "provider %s: create: %s (%s)",
		         inst->name, tb_status_text(rc),
		         perr[0] ? perr : "no detail from the provider");
		return -1;
	}
	native[TASKBOX_SANDBOX_ID_MAX - 1] = '\0';
	return 0;
}

int tb_sandbox_create(tb_call *call, const struct tb_instance *inst,
                      const char *template_name, uint32_t *lifetime_s,
                      bool given, char *id, char *err, size_t errlen)
{
	struct tb_session *session = tb_call_session(call);
	struct tb_quota_ticket ticket;
	char native[TASKBOX_SANDBOX_ID_MAX] = "";
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	if (owner_recordable(call->principal, inst, err, errlen) < 0)
		return -1;
	if (tb_quota_admit(call->principal, lifetime_s, given, &ticket, err,
	                   errlen) < 0) {
		call->refusal = "quota";
		return -1;
	}
	rc = create_on(call->principal, inst, template_name, *lifetime_s,
	               native, err, errlen);
	tb_quota_done(&ticket);
	if (rc < 0)
		return -1;
	if (tb_sandbox_ref_format(inst->name, native, id, TB_SANDBOX_REF_MAX) <
	    0) {
		snprintf(err, errlen,
		         "provider %s: create returned a malformed sandbox id",
		         inst->name);
		/* It exists, though: do not leak it. */
		inst->plugin->ops.destroy(inst->handle, native, perr,
		                          sizeof(perr));
		return -1;
	}
	if (tb_session_add(session, id, *lifetime_s) < 0) {
		snprintf(err, errlen, "out of memory recording sandbox %s", id);
		inst->plugin->ops.destroy(inst->handle, native, perr,
		                          sizeof(perr));
		return -1;
	}
	return 0;
}

int tb_sandbox_for_call(tb_call *call, json_t *args, bool may_create, char *id,
                        size_t idlen, char *err, size_t errlen)
{
	struct tb_session *session = tb_call_session(call);
	uint32_t lifetime = TB_SANDBOX_DEFAULT_LIFETIME;
	const char *given;
	int rc = 0;

	if (tb_arg_str(args, "sandbox_id", false, 3, 160, &given, err, errlen) <
	    0)
		return -1;
	if (given) {
		snprintf(id, idlen, "%s", given);
		return 0;
	}
	if (!session) {
		snprintf(err, errlen, "%s", TB_SANDBOX_ID_REQUIRED);
		return -1;
	}
	if (tb_session_default(session, id, idlen))
		return 0;
	if (!may_create) {
		snprintf(
		    err, errlen,
		    "sandbox_id: not given, and this session has no default "
		    "sandbox; call create_sandbox first");
		return -1;
	}
	tb_session_create_lock(session);
	if (!tb_session_default(session, id, idlen))
		rc = tb_sandbox_create(call, tb_registry_default(), NULL,
		                       &lifetime, false, id, err, errlen);
	tb_session_create_unlock(session);
	return rc;
}

static const char create_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"template\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
    "\"description\":\"Provider-defined template or image; omit for the "
    "provider's default.\"},"
    "\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400,"
    "\"default\":3600,\"description\":\"The sandbox's lifetime in "
    "seconds.\"},"
    "\"provider\":{\"type\":\"string\",\"pattern\":"
    "\"^[a-z][a-z0-9_-]{0,31}$\",\"description\":\"A configured provider "
    "instance; omit for the default.\"}}}";

static const char create_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandbox_id\":{\"type\":\"string\"},\"provider\":{\"type\":\"string\"},"
    "\"template\":{\"type\":[\"string\",\"null\"]},"
    "\"timeout\":{\"type\":\"integer\"}},"
    "\"required\":[\"sandbox_id\",\"provider\",\"template\",\"timeout\"]}";

static const char kill_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"sandbox_id\"],\"properties\":{\"sandbox_id\":{"
    "\"type\":\"string\",\"minLength\":3,\"maxLength\":160,\"pattern\":"
    "\"" TB_SANDBOX_ID_PATTERN "\"}}}";

static const char kill_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandbox_id\":{\"type\":\"string\"},"
    "\"destroyed\":{\"type\":\"boolean\"}},"
    "\"required\":[\"sandbox_id\",\"destroyed\"]}";

static int create_sandbox(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"template", "timeout", "provider",
	                                    NULL};
	const struct tb_instance *inst;
	const char *template_name, *provider;
	char err[TB_ERR_MAX], id[TB_SANDBOX_REF_MAX];
	int64_t timeout;
	uint32_t lifetime;

	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_arg_str(args, "template", false, 1, 256, &template_name, err,
	               sizeof(err)) < 0 ||
	    tb_arg_int(args, "timeout", 1, 86400, TB_SANDBOX_DEFAULT_LIFETIME,
	               &timeout, err, sizeof(err)) < 0 ||
	    tb_arg_str(args, "provider", false, 1, 32, &provider, err,
	               sizeof(err)) < 0)
		goto refuse;
	inst = provider ? tb_registry_find(provider) : tb_registry_default();
	if (inst == NULL) {
		snprintf(err, sizeof(err),
		         "provider: no provider instance named \"%s\" is "
		         "configured",
		         provider);
		goto refuse;
	}
	lifetime = (uint32_t)timeout;
	if (tb_sandbox_create(call, inst, template_name, &lifetime,
	                      json_object_get(args, "timeout") != NULL, id, err,
	                      sizeof(err)) < 0)
		goto refuse;
	*result =
	    json_pack("{s:s, s:s, s:o, s:I}", "sandbox_id", id, "provider",
	              inst->name, "template",
	              template_name ? json_string(template_name) : json_null(),
	              "timeout", (json_int_t)lifetime);
	return 0;
refuse:
	*result = tb_error_json(err);
	return 1;
}

static int kill_sandbox(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"sandbox_id", NULL};
	const char *sandbox_id;
	char err[TB_ERR_MAX];
	struct tb_box box;
	int rc;

	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_arg_str(args, "sandbox_id", true, 3, 160, &sandbox_id, err,
	               sizeof(err)) < 0 ||
	    tb_box_resolve(sandbox_id, "sandbox_id", &box, err, sizeof(err)) <
	        0)
		goto refuse;
	/* Anyone but an admin destroys only what is its own: ask first. */
	if (!tb_owner_is_admin(call->principal)) {
		if (tb_call_connect_box(call, &box, err, sizeof(err)) !=
		    TASKBOX_OK)
			goto refuse;
		tb_box_close(&box);
	}
	rc = tb_box_destroy(&box, err, sizeof(err));
	if (rc == TASKBOX_E_NOT_FOUND || rc == TASKBOX_E_GONE)
		tb_session_forget(tb_call_session(call), box.id);
	if (rc != TASKBOX_OK)
		goto refuse;
	tb_session_forget(tb_call_session(call), box.id);
	*result = json_pack("{s:s, s:b}", "sandbox_id", box.id, "destroyed", 1);
	return 0;
refuse:
	*result = tb_error_json(err);
	return 1;
}

static const struct tb_tool tools[] = {
    {
        .name = "create_sandbox",
        .title = "Create a sandbox",
        .description =
            "Creates a sandbox (an isolated place to run commands) and "
            "returns its sandbox_id. timeout is its lifetime in seconds "
            "(default 3600): it is destroyed then, tasks and files "
            "included; kill_sandbox destroys it at once. In an MCP session "
            "(protocol versions before 2026-07-28) it also becomes the "
            "session's default sandbox, used when a tool is given no "
            "sandbox_id; run_command, read_file and write_file from that "
            "session renew it (task tools do not); and it is destroyed when "
            "the session ends unless start_task was called in it. MCP "
            "2026-07-28 has no sessions: pass sandbox_id to every tool, and "
            "the sandbox lives until its timeout or kill_sandbox.",
        .input_schema = create_input,
        .output_schema = create_output,
        .annotations = "{\"title\":\"Create a sandbox\",\"readOnlyHint\":"
                       "false,\"destructiveHint\":false,\"idempotentHint\":"
                       "false,\"openWorldHint\":false}",
        .fn = create_sandbox,
    },
    {
        .name = "kill_sandbox",
        .title = "Destroy a sandbox",
        .description =
            "Destroys a sandbox and everything in it: every process, task, "
            "log and file. Use it to clean up a sandbox kept alive by "
            "start_task once its results are read.",
        .input_schema = kill_input,
        .output_schema = kill_output,
        .annotations = "{\"title\":\"Destroy a sandbox\",\"readOnlyHint\":"
                       "false,\"destructiveHint\":true,\"idempotentHint\":"
                       "true,\"openWorldHint\":false}",
        .fn = kill_sandbox,
    },
};

int tb_sandbox_tools_register(void)
{
	size_t i;

	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (tb_tools_register(&tools[i]) < 0)
			return -1;
	return 0;
}
