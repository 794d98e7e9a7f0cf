/* The records of calls of mcp_audit.h. A record names who called (the
 * principal, how it was authenticated, the token's id, the client, its
 * address, the transport and the era), what was called (method, tool,
 * sandbox, task, idempotency key; the command masked as task output is;
 * the byte count of what was written) and, in the response record, the
 * outcome and the duration. Never a token, never typed or written data. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/audit.h"
#include "base/principal.h"
#include "protocol/mcp_audit.h"
#include "protocol/mcp_session.h"
#include "tasks/host_mask.h"

void tb_mcp_note_client(struct tb_mcp *s, const json_t *info)
{
	const char *name = json_string_value(json_object_get(info, "name"));
	const char *version =
	    json_string_value(json_object_get(info, "version"));

	if (!name)
		return;
	snprintf(s->client_name, sizeof s->client_name, "%s", name);
	snprintf(s->client_version, sizeof s->client_version, "%s",
	         version ? version : "");
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether c changes something (else it only reads). */
static bool changes(const struct tb_call *c)
{
	if (c->tool)
		return c->tool->tool->scope != TB_SCOPE_READ;
	return tb_mcp_scope_needed(c->method_name, NULL) & TB_SCOPE_RUN;
}

/* args' string field name, or NULL. */
static const char *arg(const struct tb_call *c, const char *name)
{
	return json_string_value(json_object_get(c->args, name));
}

/* The command of start_task or run_command with the operator's secrets
 * masked (mask.values_from_env), as on every page the host returns; a new
 * JSON string, or NULL. */
static json_t *masked_command(const struct tb_call *c)
{
	const char *cmd = arg(c, "command");
	unsigned char *text = NULL;
	size_t len = 0;
	json_t *out = NULL;

	if (!cmd)
		return NULL;
	if (tb_mask_apply(tb_mask_operator(), (const unsigned char *)cmd,
	                  strlen(cmd), &text, &len) == 0)
		out = json_stringn((const char *)text, len);
	free(text);
	return out;
}

/* The byte count of write_task's data or write_file's content. */
static json_t *written_bytes(const struct tb_call *c)
{
	const char *field =
	    c->tool && strcmp(c->tool->tool->name, "write_file") == 0
	        ? "content"
	        : "data";
	json_t *data = json_object_get(c->args, field);
	const char *enc = arg(c, "encoding");
	size_t len;

	if (!c->tool || !json_is_string(data) ||
	    (strcmp(c->tool->tool->name, "write_file") != 0 &&
	     strcmp(c->tool->tool->name, "write_task") != 0))
		return NULL;
	len = json_string_length(data);
	if (enc && strcmp(enc, "base64") == 0) {
		const char *t = json_string_value(data);
		size_t pad = len >= 1 && t[len - 1] == '=' ? 1 : 0;
		pad += len >= 2 && t[len - 2] == '=' ? 1 : 0;
		len = len / 4 * 3 - pad;
	}
	return json_integer((json_int_t)len);
}

/* The record's fields common to both stages. */
static json_t *record(const struct tb_call *c, const char *stage)
{
	const struct tb_mcp *s = c->mcp;
	const struct tb_principal *who = &s->who;
	const char *task = arg(c, "task_id");
	json_t *r = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s}",
	    "stage", stage, "id", c->audit_id, "principal", who->name, "auth",
	    tb_auth_kind_name(who->how), "token_id", who->token_id, "client",
	    "name", s->client_name, "version", s->client_version, "remote",
	    s->remote, "transport", s->opts.transport, "era",
	    s->era == TB_ERA_MODERN ? "2026-07-28" : "legacy",
	    "protocol_version", s->version);

	if (!r)
		return NULL;
	json_object_set_new(r, "method", json_string(c->method_name));
	if (c->tool)
		json_object_set_new(r, "tool",
		                    json_string(c->tool->tool->name));
	if (arg(c, "sandbox_id"))
		json_object_set_new(r, "sandbox_id",
		                    json_string(arg(c, "sandbox_id")));
	if (!task)
		task = arg(c, "taskId"); /* tasks/cancel, tasks/get, ... */
	if (task)
		json_object_set_new(r, "task_id", json_string(task));
	if (arg(c, "idempotency_key"))
		json_object_set_new(r, "idempotency_key",
		                    json_string(arg(c, "idempotency_key")));
	json_t *cmd = masked_command(c);
	if (cmd)
		json_object_set_new(r, "command", cmd);
	json_t *bytes = written_bytes(c);
	if (bytes)
		json_object_set_new(r, "bytes", bytes);
	return r;
}

bool tb_mcp_audit_begin(struct tb_call *c, char *why, size_t whylen)
{
	unsigned char raw[16];
	char err[256];

	c->start_ms = now_ms();
	c->audit_id[0] = '\0';
	c->audit_recorded = false;
	if (!tb_audit_enabled())
		return true;
	/* Every call has an id: a read refused as not the caller's is
	 * recorded too, with its response record only. */
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		memset(raw, 0, sizeof raw);
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(c->audit_id + 2 * i, 3, "%02x", raw[i]);
	if (!changes(c) && !tb_audit_reads())
		return true;
	c->audit_recorded = true;
	json_t *r = record(c, "request");
	int rc = r ? tb_audit_write(r, err, sizeof err) : -1;
	json_decref(r);
	if (rc == 0)
		return true;
	snprintf(why, whylen,
	         "audit: the record of this call could not be written (%s): "
	         "the call was refused and did nothing",
	         r ? err : "out of memory");
	c->audit_id[0] = '\0';
	return false;
}

void tb_mcp_audit_note(struct tb_call *c, int rc, const json_t *out)
{
	const char *sb = json_string_value(json_object_get(out, "sandbox_id"));
	const char *tk = json_string_value(json_object_get(out, "task_id"));

	if (!c->audit_id[0])
		return;
	if (sb)
		snprintf(c->audit_sandbox, sizeof c->audit_sandbox, "%s", sb);
	if (tk)
		snprintf(c->audit_task, sizeof c->audit_task, "%s", tk);
	c->audit_outcome = rc == 0 ? "ok" : "tool_error";
}

/* The outcome of answer msg: "ok", "tool_error", "error <code>", or
 * "unanswered". */
static void outcome(const struct tb_call *c, const json_t *msg, char *out,
                    size_t outlen)
{
	json_t *err = json_object_get(msg, "error");
	json_t *result = json_object_get(msg, "result");

	if (!msg)
		snprintf(out, outlen, "unanswered");
	else if (c->base.refusal)
		snprintf(out, outlen, "%s", c->base.refusal);
	else if (err)
		snprintf(out, outlen, "error %lld",
		         (long long)json_integer_value(
		             json_object_get(err, "code")));
	else if (json_is_true(json_object_get(result, "isError")))
		snprintf(out, outlen, "tool_error");
	else
		snprintf(out, outlen, "%s",
		         c->audit_outcome ? c->audit_outcome : "ok");
}

void tb_mcp_audit_end(struct tb_call *c, const json_t *msg)
{
	char what[32], err[256];

	if (!c->audit_id[0] || (!c->audit_recorded && !c->base.refusal))
		return;
	json_t *r = record(c, "response");
	if (!r)
		return;
	if (c->audit_sandbox[0] && !json_object_get(r, "sandbox_id"))
		json_object_set_new(r, "sandbox_id",
		                    json_string(c->audit_sandbox));
	if (c->audit_task[0] && !json_object_get(r, "task_id"))
		json_object_set_new(r, "task_id", json_string(c->audit_task));
	outcome(c, msg, what, sizeof what);
	json_object_set_new(r, "outcome", json_string(what));
	json_object_set_new(r, "duration_ms",
	                    json_integer(now_ms() - c->start_ms));
	/* A failure is said by /healthz (degraded); the call has run and
	 * its request record stands. */
	tb_audit_write(r, err, sizeof err);
	json_decref(r);
}
