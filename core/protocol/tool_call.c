/* One tools/call from hand-off to answer, and the tb_call functions of
 * tool.h that handlers use: cancellation, progress, sleeping. */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protocol/jsonrpc.h"
#include "base/log.h"
#include "protocol/mcp_session.h"
#include "protocol/workers.h"

static const struct tb_call_ops call_ops;

struct tb_call *tb_call_new(struct tb_mcp *s, const struct tb_tool_entry *tool,
                            json_t *id, const char *id_key, json_t *args,
                            json_t *progress_token)
{
	struct tb_call *c = calloc(1, sizeof *c);
	pthread_condattr_t attr;

	if (!c)
		return NULL;
	c->id_key = strdup(id_key);
	if (!c->id_key) {
		free(c);
		return NULL;
	}
	c->cost = s->line_cost;
	c->base.ops = &call_ops;
	c->base.session = s->opts.session;
	c->mcp = s;
	c->tool = tool;
	c->id = json_incref(id);
	c->args = json_incref(args);
	c->progress_token = json_incref(progress_token);
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wake, &attr);
	pthread_condattr_destroy(&attr);
	return c;
}

void tb_call_free(struct tb_call *c)
{
	if (!c)
		return;
	json_decref(c->id);
	json_decref(c->args);
	json_decref(c->progress_token);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	free(c->id_key);
	bool large = c->cost > TB_RPC_TRIM_COST;
	free(c);
	if (large)
		malloc_trim(0); /* a large call's memory goes back */
}

bool tb_call_unlink(struct tb_call *c)
{
	struct tb_mcp *s = c->mcp;
	bool by_client;

	pthread_mutex_lock(&s->calls_lock);
	for (struct tb_call **p = &s->calls; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			__atomic_sub_fetch(&s->inflight, 1, __ATOMIC_RELEASE);
			s->inflight_cost -= c->cost;
			pthread_cond_signal(&s->room);
			break;
		}
	by_client = __atomic_load_n(&c->cancelled, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&s->calls_lock);
	return by_client;
}

void tb_call_cancel(struct tb_call *c)
{
	__atomic_store_n(&c->cancelled, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&c->lock);
	pthread_cond_broadcast(&c->wake);
	pthread_mutex_unlock(&c->lock);
}

/* The CallToolResult for out without structuredContent; *structured gets
 * out's text when the result should carry it too (on success, where the
 * version has it), else NULL. Steals out. */
static json_t *tool_answer(const struct tb_call *c, json_t *out, bool error,
                           char **structured)
{
	char *text = json_dumps(out, JSON_COMPACT);
	json_t *r = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text",
	                      "text", text ? text : "{}", "isError", error);

	*structured = NULL;
	/* Error objects need not match outputSchema, which clients check
	 * structuredContent against: they travel as text only. */
	if (r && text && !error && tb_mcp_at_least(c->mcp, "2025-06-18"))
		*structured = text;
	else
		free(text);
	json_decref(out);
	return r;
}

json_t *tb_call_tool_result(const struct tb_call *c, json_t *out, bool error)
{
	char *structured;
	json_t *r = tool_answer(c, json_incref(out), error, &structured);

	if (r && structured)
		json_object_set(r, "structuredContent", out);
	free(structured);
	json_decref(out);
	return r;
}

/* {"error": message} as a tool error result. */
static json_t *error_result(const struct tb_call *c, const char *message)
{
	return tb_call_tool_result(c, json_pack("{s:s}", "error", message),
	                           true);
}

/* Runs the tool's handler: its CallToolResult (with the structured
 * content's text apart, see tool_answer), or NULL when out of memory. */
static json_t *run_tool(struct tb_call *c, char **structured)
{
	char why[512];
	json_t *out = NULL;

	*structured = NULL;
	if (tb_schema_validate(c->tool->validator, c->args, why, sizeof why))
		return error_result(c, why);
	int rc = c->tool->tool->fn(&c->base, c->args, &out);
	if ((rc == 0 || rc == 1) && json_is_object(out))
		return tool_answer(c, out, rc == 1, structured);
	tb_log(TB_LOG_ERROR, "tool %s broke its contract (returned %d)",
	       c->tool->tool->name, rc);
	json_decref(out);
	return error_result(c, "internal error in the tool");
}

void tb_call_run(void *arg)
{
	struct tb_call *c = arg;
	json_t *msg = NULL;
	char *structured = NULL;
	bool never_started = __atomic_load_n(&c->cancelled, __ATOMIC_SEQ_CST);

	if (!never_started) {
		if (c->job) {
			msg = c->job(c);
		} else {
			json_t *result = run_tool(c, &structured);
			msg = result ? tb_rpc_result(c->id, result) : NULL;
		}
	}
	if (tb_call_unlink(c)) {
		tb_log(TB_LOG_DEBUG, "call %s cancelled: no answer", c->id_key);
		json_decref(msg);
	} else if (!msg) {
		tb_mcp_send(c->mcp,
		            tb_rpc_error(c->id, TB_RPC_INTERNAL_ERROR,
		                         "Internal error: out of memory"));
	} else if (structured) {
		tb_mcp_send_line(
		    c->mcp,
		    tb_rpc_dump_with(msg, "structuredContent", structured));
		json_decref(msg);
	} else {
		tb_mcp_send(c->mcp, msg);
	}
	free(structured);
	tb_call_free(c);
}

void tb_call_submit(struct tb_call *c)
{
	struct tb_mcp *s = c->mcp;

	pthread_mutex_lock(&s->calls_lock);
	c->next = s->calls;
	s->calls = c;
	__atomic_add_fetch(&s->inflight, 1, __ATOMIC_RELEASE);
	s->inflight_cost += c->cost;
	pthread_mutex_unlock(&s->calls_lock);
	if (!s->opts.pool) {
		tb_call_run(c);
		return;
	}
	if (tb_workers_submit(s->opts.pool, tb_call_run, c) == 0)
		return;
	tb_call_unlink(c);
	tb_log(TB_LOG_WARN,
	       "%s refused: every worker is busy and the queue is full",
	       c->tool ? c->tool->tool->name : "a request");
	tb_mcp_send(s, tb_rpc_error(c->id, TB_RPC_INTERNAL_ERROR,
	                            "Internal error: server busy, too many "
	                            "calls in flight; retry later"));
	tb_call_free(c);
}

bool tb_call_is_cancelled(const struct tb_call *call)
{
	return __atomic_load_n(&call->cancelled, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&call->mcp->shutting_down, __ATOMIC_SEQ_CST);
}

/* The call's ops (tools/tool.h): base is the first member of the call. */
static bool op_cancelled(const tb_call *base)
{
	return tb_call_is_cancelled((const struct tb_call *)base);
}

static void op_progress(tb_call *base, double progress, double total,
                        const char *message)
{
	struct tb_call *call = (struct tb_call *)base;

	if (!call->progress_token)
		return;
	pthread_mutex_lock(&call->lock);
	bool increases = !call->have_progress || progress > call->last_progress;
	if (increases) {
		call->have_progress = true;
		call->last_progress = progress;
	}
	pthread_mutex_unlock(&call->lock);
	if (!increases)
		return; /* the spec wants every value above the last */
	json_t *params = json_pack("{s:O,s:f}", "progressToken",
	                           call->progress_token, "progress", progress);
	if (params && total >= 0)
		json_object_set_new(params, "total", json_real(total));
	if (params && message && tb_mcp_at_least(call->mcp, "2025-03-26")) {
		json_t *m = json_string(message);
		if (m)
			json_object_set_new(params, "message", m);
	}
	if (params)
		tb_mcp_send(call->mcp, tb_rpc_notification(
		                           "notifications/progress", params));
}

static bool op_sleep(tb_call *base, uint32_t timeout_ms)
{
	struct tb_call *call = (struct tb_call *)base;
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&call->lock);
	while (!tb_call_is_cancelled(call))
		if (pthread_cond_timedwait(&call->wake, &call->lock, &until) ==
		    ETIMEDOUT)
			break;
	pthread_mutex_unlock(&call->lock);
	return tb_call_is_cancelled(call);
}

static const struct tb_call_ops call_ops = {
    .cancelled = op_cancelled,
    .progress = op_progress,
    .sleep = op_sleep,
};
