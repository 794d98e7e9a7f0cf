/* MCP lifecycle and dispatch: the era of each request, initialize and
 * version negotiation, server/discover, ping, notifications, and routing
 * to the tools and tasks methods. */
#include "config.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protocol/jsonrpc.h"
#include "base/log.h"
#include "protocol/mcp_session.h"
#include "protocol/mcp_stats.h"
#include "protocol/mcp_tasks.h"

const char *const tb_mcp_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                       "2024-11-05", NULL};

struct tb_mcp *tb_mcp_new(const struct tb_mcp_opts *opts)
{
	struct tb_mcp *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->opts = *opts;
	if (opts->principal)
		s->who = *opts->principal;
	else
		tb_principal_local(&s->who, TB_AUTH_STDIO);
	s->opts.principal = &s->who;
	pthread_mutex_init(&s->out_lock, NULL);
	pthread_mutex_init(&s->calls_lock, NULL);
	pthread_cond_init(&s->room, NULL);
	return s;
}

void tb_mcp_free(struct tb_mcp *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->out_lock);
	pthread_mutex_destroy(&s->calls_lock);
	pthread_cond_destroy(&s->room);
	free(s);
}

void tb_mcp_send(struct tb_mcp *s, json_t *msg)
{
	if (s->current_modern)
		tb_mcp_modern_result(msg);
	char *text = msg ? tb_rpc_dump(msg) : NULL;

	tb_mcp_stats_answer(s->current_method, msg);
	json_decref(msg);
	tb_mcp_write(s, &s->current, text, true);
}

void tb_mcp_write(struct tb_mcp *s, const struct tb_mcp_sink *sink, char *text,
                  bool reply)
{
	if (!text) {
		tb_log(TB_LOG_ERROR, "out of memory building a message");
		return;
	}
	pthread_mutex_lock(&s->out_lock);
	sink->write(sink->ctx, text, strlen(text), reply);
	pthread_mutex_unlock(&s->out_lock);
	free(text);
}

const char *tb_mcp_version(const struct tb_mcp *s)
{
	return s->version;
}

bool tb_mcp_at_least(const struct tb_mcp *s, const char *v)
{
	return strcmp(s->version, v) >= 0;
}

struct tb_call *tb_mcp_find_call(struct tb_mcp *s, const char *id_key)
{
	for (struct tb_call *c = s->calls; c; c = c->next)
		if (strcmp(c->id_key, id_key) == 0)
			return c;
	return NULL;
}

void tb_mcp_shutdown(struct tb_mcp *s)
{
	__atomic_store_n(&s->shutting_down, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&s->calls_lock);
	for (struct tb_call *c = s->calls; c; c = c->next) {
		pthread_mutex_lock(&c->lock);
		pthread_cond_broadcast(&c->wake);
		pthread_mutex_unlock(&c->lock);
		if (s->opts.parker)
			tb_parker_wake(s->opts.parker, &c->park);
	}
	pthread_mutex_unlock(&s->calls_lock);
}

void tb_mcp_close(struct tb_mcp *s, void (*done)(void *ctx), void *ctx)
{
	tb_mcp_shutdown(s);
	pthread_mutex_lock(&s->calls_lock);
	bool now = s->live == 0;
	if (!now) {
		s->closed = done;
		s->closed_ctx = ctx;
	}
	pthread_mutex_unlock(&s->calls_lock);
	if (now)
		done(ctx);
}

/* The answer to initialize: the client's version when served, else the
 * newest. */
static json_t *initialize(struct tb_mcp *s, json_t *id, json_t *params)
{
	json_t *want = json_object_get(params, "protocolVersion");
	const char *chosen = tb_mcp_versions[0];

	if (s->initialized)
		return tb_rpc_error(id, TB_RPC_INVALID_REQUEST,
		                    "Invalid Request: the session is already "
		                    "initialized");
	if (!json_is_string(want))
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: field 'protocolVersion' "
		                    "must be a string");
	for (int i = 0; tb_mcp_versions[i]; i++)
		if (strcmp(json_string_value(want), tb_mcp_versions[i]) == 0)
			chosen = tb_mcp_versions[i];
	snprintf(s->version, sizeof s->version, "%s", chosen);
	s->initialized = true;
	s->era = TB_ERA_LEGACY;
	tb_log(TB_LOG_INFO, "client asked for protocol %.32s; serving %s",
	       json_string_value(want), chosen);

	json_t *info = json_pack("{s:s,s:s}", "name", PACKAGE_NAME, "version",
	                         PACKAGE_VERSION);
	if (tb_mcp_at_least(s, "2025-06-18"))
		json_object_set_new(info, "title", json_string("taskbox"));
	json_t *result = json_pack("{s:s,s:{s:{s:b}},s:o}", "protocolVersion",
	                           chosen, "capabilities", "tools",
	                           "listChanged", 0, "serverInfo", info);
	if (result && tb_mcp_tasks_enabled(s))
		json_object_set_new(json_object_get(result, "capabilities"),
		                    "tasks", tb_mcp_tasks_capability());
	return tb_rpc_result(id, result);
}

bool tb_mcp_cancel_request(struct tb_mcp *s, const char *id_key)
{
	pthread_mutex_lock(&s->calls_lock);
	struct tb_call *c = tb_mcp_find_call(s, id_key);
	if (c)
		tb_call_cancel(c);
	pthread_mutex_unlock(&s->calls_lock);
	tb_log(TB_LOG_DEBUG, "cancel %s: %s", id_key,
	       c ? "stopping the call" : "no such call in flight");
	return c != NULL;
}

/* notifications/cancelled: the call stops and is never answered. */
static void cancelled(struct tb_mcp *s, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	char *key = tb_rpc_id_key(rid);

	if (!key)
		return;
	tb_mcp_cancel_request(s, key);
	free(key);
}

static void notification(struct tb_mcp *s, const char *method, json_t *params)
{
	if (strcmp(method, "notifications/initialized") == 0)
		s->client_ready = true;
	else if (strcmp(method, "notifications/cancelled") == 0)
		cancelled(s, params);
	else
		tb_log(TB_LOG_DEBUG, "ignoring notification %.64s", method);
}

/* A request without the envelope once the process is modern: initialize
 * names the versions served; anything else lacks the envelope. */
static json_t *unenveloped(json_t *id, const char *method, json_t *params)
{
	if (strcmp(method, "initialize") == 0) {
		const char *v = json_string_value(
		    json_object_get(params, "protocolVersion"));
		return tb_mcp_unsupported_version(id, v ? v : "");
	}
	return tb_mcp_envelope_error(id, params);
}

/* A modern request (its params claim a version): checked, then answered
 * statelessly; returns the reply, or NULL when handed off or answered. */
static json_t *modern(struct tb_mcp *s, struct tb_rpc_msg *m, const char *key)
{
	json_t *bad = tb_mcp_envelope_error(m->id, m->params);

	s->current_modern = true;
	if (bad)
		return bad;
	if (strcmp(m->method, "server/discover") == 0)
		return tb_rpc_result(
		    m->id, tb_mcp_discover_result(tb_mcp_tasks_ext_enabled()));
	if (s->era == TB_ERA_UNDECIDED) {
		s->era = TB_ERA_MODERN;
		snprintf(s->version, sizeof s->version, "%s",
		         tb_mcp_claimed_version(m->params));
		tb_log(TB_LOG_INFO, "serving protocol %s (no sessions)",
		       s->version);
	}
	if (strcmp(m->method, "tools/list") == 0)
		tb_mcp_tools_list(s, m->id, m->params);
	else if (strcmp(m->method, "tools/call") == 0)
		tb_mcp_tools_call(s, m->id, key, m->params);
	else if (!tb_mcp_tasks_ext_request(s, m->id, key, m->method, m->params))
		/* ping, initialize, logging/setLevel, tasks/result, ... */
		return tb_rpc_error(m->id, TB_RPC_METHOD_NOT_FOUND,
		                    "Method not found: %.64s (not in protocol "
		                    "revision %s)",
		                    m->method,
		                    s->version[0] ? s->version : "2026-07-28");
	return NULL;
}

/* Answers one request, or hands tools/call to the pool. */
static void request(struct tb_mcp *s, struct tb_rpc_msg *m)
{
	char *key = tb_rpc_id_key(m->id);
	json_t *reply = NULL;

	s->current_method = tb_mcp_stats_method(m->method);
	tb_mcp_stats_request(s->current_method);
	if (!key) {
		reply = tb_rpc_error(m->id, TB_RPC_INTERNAL_ERROR,
		                     "Internal error: out of memory");
		goto out;
	}
	pthread_mutex_lock(&s->calls_lock);
	bool duplicate = tb_mcp_find_call(s, key) != NULL;
	pthread_mutex_unlock(&s->calls_lock);
	/* The body decides the era; a legacy session serves enveloped
	 * requests as legacy ones, but for server/discover. */
	bool claims = tb_mcp_claims(m->params);
	if (duplicate) {
		reply =
		    tb_rpc_error(m->id, TB_RPC_INVALID_REQUEST,
		                 "Invalid Request: id %.64s is already used "
		                 "by a request in flight",
		                 key + 2);
	} else if (claims && (s->era != TB_ERA_LEGACY ||
	                      strcmp(m->method, "server/discover") == 0)) {
		reply = modern(s, m, key);
	} else if (s->era == TB_ERA_MODERN ||
	           (s->era == TB_ERA_UNDECIDED &&
	            tb_mcp_claims_partly(m->params))) {
		reply = unenveloped(m->id, m->method, m->params);
	} else if (strcmp(m->method, "server/discover") == 0) {
		reply = tb_mcp_envelope_error(m->id, m->params);
	} else if (strcmp(m->method, "ping") == 0) {
		reply = tb_rpc_result(m->id, json_object());
	} else if (strcmp(m->method, "initialize") == 0) {
		reply = initialize(s, m->id, m->params);
	} else if (!s->initialized) {
		reply = tb_rpc_error(m->id, TB_RPC_INVALID_REQUEST,
		                     "Invalid Request: the server is not "
		                     "initialized; send initialize first");
	} else if (strcmp(m->method, "tools/list") == 0) {
		tb_mcp_tools_list(s, m->id, m->params);
	} else if (strcmp(m->method, "tools/call") == 0) {
		tb_mcp_tools_call(s, m->id, key, m->params);
	} else if (tb_mcp_tasks_request(s, m->id, key, m->method, m->params)) {
		/* answered or handed off */
	} else {
		reply = tb_rpc_error(m->id, TB_RPC_METHOD_NOT_FOUND,
		                     "Method not found: %.64s", m->method);
	}
out:
	free(key);
	if (reply)
		tb_mcp_send(s, reply);
}

/* Whether one more call of this cost must wait; calls_lock held. */
static bool full(const struct tb_mcp *s, size_t cost)
{
	if (s->inflight == 0)
		return false;
	return (s->opts.max_calls &&
	        s->inflight - s->parked >= s->opts.max_calls) ||
	       (s->opts.max_cost && s->inflight_cost + cost > s->opts.max_cost);
}

/* Waits until a message of this cost may be taken (tb_mcp_opts). The
 * reader stops reading meanwhile, so a client that writes faster than the
 * server answers is slowed down by its pipe, never refused. */
static void admit(struct tb_mcp *s, size_t cost)
{
	struct timespec until;

	/* Nothing in flight (the common case): admitted without the lock.
	 * Only this thread adds calls, so the count cannot grow meanwhile. */
	if ((!s->opts.max_calls && !s->opts.max_cost) ||
	    __atomic_load_n(&s->inflight, __ATOMIC_ACQUIRE) == 0)
		return;
	pthread_mutex_lock(&s->calls_lock);
	while (full(s, cost) &&
	       !(s->opts.interrupted && s->opts.interrupted(s->opts.ctx))) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->room, &s->calls_lock, &until);
	}
	pthread_mutex_unlock(&s->calls_lock);
}

void tb_mcp_handle_line(struct tb_mcp *s, const char *line, size_t len)
{
	struct tb_mcp_sink out = {s->opts.write, s->opts.ctx, NULL, NULL};

	tb_mcp_handle_message(s, line, len, &out);
}

void tb_mcp_handle_message(struct tb_mcp *s, const char *line, size_t len,
                           const struct tb_mcp_sink *sink)
{
	struct tb_rpc_msg m;
	size_t values;

	s->current = *sink;
	s->current_method = tb_mcp_stats_method(NULL);
	s->current_modern = false;
	if (tb_rpc_blank(line, len))
		return;
	values = tb_rpc_count_values(line, len, TB_RPC_MAX_VALUES);
	s->line_cost = len + values * TB_RPC_VALUE_COST;
	admit(s, s->line_cost);
	tb_rpc_parse_counted(line, len, values, &m);
	switch (m.kind) {
	case TB_RPC_REQUEST:
		request(s, &m);
		break;
	case TB_RPC_NOTIFICATION:
		if (m.method)
			notification(s, m.method, m.params);
		break;
	case TB_RPC_RESPONSE:
		tb_log(TB_LOG_DEBUG, "ignoring a response: no request sent");
		break;
	case TB_RPC_INVALID:
		tb_log(TB_LOG_INFO, "rejected a message: %s", m.error_message);
		tb_mcp_send(
		    s, tb_rpc_error(m.id, m.error_code, "%s", m.error_message));
		break;
	}
	tb_rpc_msg_clear(&m);
	if (s->line_cost > TB_RPC_TRIM_COST)
		malloc_trim(0); /* a large message's memory goes back */
}

void tb_mcp_line_too_long(struct tb_mcp *s, size_t max)
{
	s->current =
	    (struct tb_mcp_sink){s->opts.write, s->opts.ctx, NULL, NULL};
	s->current_modern = false;
	tb_log(TB_LOG_WARN, "dropped a line longer than %zu bytes", max);
	tb_mcp_send(s, tb_rpc_error(NULL, TB_RPC_INVALID_REQUEST,
	                            "Invalid Request: message longer than "
	                            "%zu bytes",
	                            max));
}
