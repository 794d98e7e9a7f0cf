/* create_sandbox and kill_sandbox, and the session's default sandbox. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tasks/box.h"
#include "host/provider_stats.h"
#include "tools/sandboxes.h"
#include "tasks/session.h"
#include "tools/tasks.h"
#include "tools/tool.h"
#include "tools/tool_args.h"
#include "host/sandbox_ref.h"

int tb_sandbox_create(struct tb_session *session,
                      const struct tb_instance *inst, const char *template_name,
                      uint32_t lifetime_s, char *id, char *err, size_t errlen)
{
	struct taskbox_create_req req;
	char native[TASKBOX_SANDBOX_ID_MAX] = "";
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	memset(&req, 0, sizeof(req));
	req.struct_size = sizeof(req);
	req.template_name = template_name;
	req.lifetime_s = lifetime_s;
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
	native[sizeof(native) - 1] = '\0';
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
	if (tb_session_add(session, id, lifetime_s) < 0) {
		snprintf(err, errlen, "out of memory recording sandbox %s", id);
		inst->plugin->ops.destroy(inst->handle, native, perr,
		                          sizeof(perr));
		return -1;
	}
	return 0;
}

int tb_sandbox_for_call(struct tb_session *session, json_t *args,
                        bool may_create, char *id, size_t idlen, char *err,
                        size_t errlen)
{
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
		rc = tb_sandbox_create(session, tb_registry_default(), NULL,
		                       TB_SANDBOX_DEFAULT_LIFETIME, id, err,
		                       errlen);
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

	(void)call;
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
	if (tb_sandbox_create(tb_call_session(call), inst, template_name,
	                      (uint32_t)timeout, id, err, sizeof(err)) < 0)
		goto refuse;
	*result =
	    json_pack("{s:s, s:s, s:o, s:I}", "sandbox_id", id, "provider",
	              inst->name, "template",
	              template_name ? json_string(template_name) : json_null(),
	              "timeout", (json_int_t)timeout);
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

	(void)call;
	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_arg_str(args, "sandbox_id", true, 3, 160, &sandbox_id, err,
	               sizeof(err)) < 0 ||
	    tb_box_resolve(sandbox_id, "sandbox_id", &box, err, sizeof(err)) <
	        0)
		goto refuse;
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
