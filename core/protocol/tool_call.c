/* One tools/call from hand-off to answer, and the tb_call functions of
 * tool.h that handlers use: cancellation, progress, sleeping. */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protocol/jsonrpc.h"
#include "base/log.h"
#include "protocol/mcp_audit.h"
#include "protocol/mcp_session.h"
#include "protocol/mcp_stats.h"
#include "protocol/workers.h"
#include "tools/tool_stats.h"

static const struct tb_call_ops call_ops;
static bool op_sleep(tb_call *base, uint32_t timeout_ms);

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
	pthread_mutex_lock(&s->calls_lock);
	s->live++;
	pthread_mutex_unlock(&s->calls_lock);
	c->park_fd = -1;
	c->cost = s->line_cost;
	c->method = s->current_method;
	c->sink = s->current;
	if (c->sink.hold)
		c->sink.hold(c->sink.ctx);
	c->base.ops = &call_ops;
	c->modern = s->current_modern;
	/* A modern request belongs to no session: no default sandbox, no
	 * cleanup at the end. */
	c->base.session = c->modern ? NULL : s->opts.session;
	c->base.principal = &s->who;
	memcpy(c->method_name, s->current_method_name, sizeof c->method_name);
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
	if (c->park_fd >= 0 && !c->park_borrowed)
		close(c->park_fd);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	free(c->id_key);
	if (c->sink.release)
		c->sink.release(c->sink.ctx);
	struct tb_mcp *s = c->mcp;
	bool large = c->cost > TB_RPC_TRIM_COST;
	free(c);
	if (large)
		malloc_trim(0); /* a large call's memory goes back */
	/* The session's last call is gone: a close waiting for it is done. */
	void (*closed)(void *) = NULL;
	void *closed_ctx = NULL;
	pthread_mutex_lock(&s->calls_lock);
	if (--s->live == 0 && s->closed) {
		closed = s->closed;
		closed_ctx = s->closed_ctx;
		s->closed = NULL;
	}
	pthread_mutex_unlock(&s->calls_lock);
	if (closed)
		closed(closed_ctx);
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
			tb_mcp_stats_inflight(-1);
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
	if (c->mcp->opts.parker)
		tb_parker_wake(c->mcp->opts.parker, &c->park);
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

/* The CallToolResult for what a handler or step returned (rc, out), or
 * NULL when out of memory; *structured as in tool_answer. */
static json_t *handler_answer(struct tb_call *c, int rc, json_t *out,
                              char **structured)
{
	if ((rc == 0 || rc == 1) && json_is_object(out))
		return tool_answer(c, out, rc == 1, structured);
	tb_log(TB_LOG_ERROR, "tool %s broke its contract (returned %d)",
	       c->tool->tool->name, rc);
	json_decref(out);
	return error_result(c, "internal error in the tool");
}

/* Sends c's answer (unless the client cancelled it) and frees c. msg is
 * the response, NULL when out of memory; structured as in tool_answer. */
static void finish(struct tb_call *c, json_t *msg, char *structured)
{
	tb_mcp_audit_end(c, msg);
	tb_mcp_stats_answer(c->method, msg);
	if (tb_call_unlink(c)) {
		tb_log(TB_LOG_DEBUG, "call %s cancelled: no answer", c->id_key);
		json_decref(msg);
	} else if (!msg) {
		tb_call_send(c,
		             tb_rpc_error(c->id, TB_RPC_INTERNAL_ERROR,
		                          "Internal error: out of memory"),
		             true);
	} else if (structured) {
		if (c->modern)
			tb_mcp_modern_result(msg);
		char *line =
		    tb_rpc_dump_with(msg, "structuredContent", structured);
		/* Gone before the line is copied out: a large answer is in
		 * memory once, not three times. */
		json_decref(msg);
		free(structured);
		structured = NULL;
		tb_mcp_write(c->mcp, &c->sink, line, true);
	} else {
		tb_call_send(c, msg, true);
	}
	free(structured);
	tb_call_free(c);
}

static void resume(void *arg);

/* Counts a call in or out of the session's parked ones, which hold no
 * worker and so leave room for another call (tb_mcp_opts admission). */
static void count_parked(struct tb_mcp *s, int delta)
{
	pthread_mutex_lock(&s->calls_lock);
	s->parked += (unsigned)delta;
	tb_mcp_stats_parked(delta);
	pthread_cond_signal(&s->room);
	pthread_mutex_unlock(&s->calls_lock);
}

/* Hands c to the parker until its step is due; false when there is no
 * parker to take it (or it is stopping, or c is cancelled). */
static bool park(struct tb_call *c)
{
	struct tb_parker *p = c->mcp->opts.parker;

	if (!p || tb_call_is_cancelled(c))
		return false;
	c->park.fn = resume;
	c->park.arg = c;
	count_parked(c->mcp, 1);
	int fd = c->park_fd;
	c->park_fd = -1;
	c->park.borrowed = c->park_borrowed;
	/* Once added, c may be resumed on a worker, answered and freed at
	 * once; resume takes c->lock first, so c lives until this unlock. */
	pthread_mutex_lock(&c->lock);
	if (tb_parker_add_fd(p, &c->park, c->park_ms, fd) < 0) {
		pthread_mutex_unlock(&c->lock);
		count_parked(c->mcp, -1);
		return false;
	}
	/* A cancel between the check above and the add found nothing to
	 * wake: wake it here. */
	if (tb_call_is_cancelled(c))
		tb_parker_wake(p, &c->park);
	pthread_mutex_unlock(&c->lock);
	return true;
}

/* Runs c's pending step; returns its rc with *out. */
static int run_step(struct tb_call *c, json_t **out)
{
	tb_tool_step_fn step = c->step;
	void *state = c->step_state;

	c->step = NULL;
	c->step_state = NULL;
	return step(&c->base, state, out);
}

/* Asks the sink for room for the answer out will make, when large: the
 * structured text, the same text escaped in the text block, the envelope.
 * Refused, *out becomes a tool error that says why (*rc 1). Only a
 * read-only tool's answer is asked for: another's call has changed
 * something, and its answer is the only account of it. */
static void reserve_answer(struct tb_call *c, int *rc, json_t **out)
{
	json_t *ro = json_object_get(c->tool->annotations, "readOnlyHint");
	char why[256];
	size_t size;

	if (!c->sink.reserve || !json_is_object(*out) || !json_is_true(ro))
		return;
	size = json_dumpb(*out, NULL, 0, JSON_COMPACT); /* counts, no copy */
	if (size < TB_ANSWER_LARGE / 3)
		return;
	size = 3 * size + 1024;
	if (c->sink.reserve(c->sink.ctx, size, why, sizeof why))
		return;
	tb_log(TB_LOG_WARN, "%s: an answer of about %zu bytes refused: %s",
	       c->tool->tool->name, size, why);
	json_decref(*out);
	*out = json_pack("{s:s+}", "error", "the answer was not sent: ", why);
	*rc = 1;
}

/* The JSON-RPC error of a call refused for want of room, with the
 * message of out ({"error": message}, taken). */
static json_t *busy_error(const struct tb_call *c, json_t *out)
{
	const char *m = json_string_value(json_object_get(out, "error"));
	json_t *e = tb_rpc_error(c->id, TB_RPC_SERVER_BUSY, "%s",
	                         m ? m : "server busy; retry later");

	json_decref(out);
	return e;
}

/* Ends c with its handler's or step's rc and out, or parks it: with the
 * parker no thread waits for the step; without one this thread sleeps
 * until it is due and runs it. */
static void settle(struct tb_call *c, int rc, json_t *out)
{
	char *structured = NULL;
	json_t *result;

	while (rc == TB_TOOL_PARKED && c->step) {
		if (park(c))
			return;
		if (c->park_fd >= 0) {
			/* a sleep here watches nothing */
			if (!c->park_borrowed)
				close(c->park_fd);
			c->park_fd = -1;
		}
		if (!tb_call_is_cancelled(c))
			op_sleep(&c->base, c->park_ms);
		out = NULL;
		rc = run_step(c, &out);
	}
	tb_mcp_audit_note(c, rc, out);
	if (rc == TB_TOOL_BUSY && !c->job_end && c->mcp->opts.busy_status) {
		tb_tool_stats_call(c->tool, true);
		finish(c, busy_error(c, out), NULL);
		return;
	}
	if (rc == TB_TOOL_BUSY)
		rc = 1;
	if (c->job_end) {
		finish(c, c->job_end(c, rc, out), NULL);
		return;
	}
	reserve_answer(c, &rc, &out);
	tb_tool_stats_call(c->tool, rc != 0);
	result = handler_answer(c, rc, out, &structured);
	finish(c, result ? tb_rpc_result(c->id, result) : NULL, structured);
}

/* A parked call's step, due or woken: run by the pool. */
static void resume(void *arg)
{
	struct tb_call *c = arg;
	json_t *out = NULL;

	/* Waits for park() to be done with c (see there). */
	pthread_mutex_lock(&c->lock);
	pthread_mutex_unlock(&c->lock);
	count_parked(c->mcp, -1);
	int rc = run_step(c, &out);

	settle(c, rc, out);
}

void tb_call_run(void *arg)
{
	struct tb_call *c = arg;
	json_t *out = NULL;
	char why[512];

	if (__atomic_load_n(&c->cancelled, __ATOMIC_SEQ_CST)) {
		finish(c, NULL, NULL); /* never started: nobody waits */
		return;
	}
	if (c->job && !tb_mcp_audit_begin(c, why, sizeof why)) {
		finish(c,
		       tb_rpc_error(c->id, TB_RPC_INTERNAL_ERROR,
		                    "Internal error: %s", why),
		       NULL);
		return;
	}
	if (c->job) {
		json_t *msg = c->job(c);
		if (!msg && c->step && c->job_end)
			settle(c, TB_TOOL_PARKED, NULL);
		else
			finish(c, msg, NULL);
		return;
	}
	if (tb_schema_validate(c->tool->validator, c->args, why, sizeof why)) {
		tb_tool_stats_call(c->tool, true);
		finish(c, tb_rpc_result(c->id, error_result(c, why)), NULL);
		return;
	}
	if (!tb_mcp_audit_begin(c, why, sizeof why)) {
		tb_tool_stats_call(c->tool, true);
		finish(c, tb_rpc_result(c->id, error_result(c, why)), NULL);
		return;
	}
	int rc = c->tool->tool->fn(&c->base, c->args, &out);
	settle(c, rc, out);
}

void tb_call_send(struct tb_call *c, json_t *msg, bool reply)
{
	if (reply && c->modern)
		tb_mcp_modern_result(msg);
	char *text = msg ? tb_rpc_dump(msg) : NULL;

	json_decref(msg);
	tb_mcp_write(c->mcp, &c->sink, text, reply);
}

void tb_call_submit(struct tb_call *c)
{
	struct tb_mcp *s = c->mcp;

	pthread_mutex_lock(&s->calls_lock);
	c->next = s->calls;
	s->calls = c;
	__atomic_add_fetch(&s->inflight, 1, __ATOMIC_RELEASE);
	s->inflight_cost += c->cost;
	tb_mcp_stats_inflight(1);
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
		tb_call_send(
		    call, tb_rpc_notification("notifications/progress", params),
		    false);
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

static void op_park(tb_call *base, uint32_t ms, int fd, bool borrowed,
                    tb_tool_step_fn step, void *state)
{
	struct tb_call *call = (struct tb_call *)base;

	if (call->park_fd >= 0 && !call->park_borrowed)
		close(call->park_fd);
	call->park_fd = fd;
	call->park_borrowed = borrowed;
	call->park_ms = ms;
	call->step = step;
	call->step_state = state;
}

static const struct tb_call_ops call_ops = {
    .cancelled = op_cancelled,
    .progress = op_progress,
    .sleep = op_sleep,
    .park = op_park,
};
