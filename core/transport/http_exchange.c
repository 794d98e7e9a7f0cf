/* One POST and its answer. The body goes to its session with this
 * exchange as the sink; the answer is JSON when the reply is the first
 * message, SSE when a notification comes first, 202 for a notification or
 * a response, and an empty stream for a request cancelled unanswered.
 * While a call runs the connection is suspended (no thread waits for it)
 * and its socket watched, so a client that hangs up cancels the call; the
 * sink's first write, or the call's end, resumes it. MHD is suspended
 * under the exchange's lock from MHD's thread, and resumed outside it
 * from any thread by whoever clears `suspended`. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/rpc_codes.h"
#include "protocol/jsonrpc.h"
#include "protocol/parker.h"
#include "transport/http_internal.h"

#define SSE_HEAD "event: message\ndata: "
#define SSE_TAIL "\n\n"
#define SSE_BLOCK 16384

struct http_exchange *http_exchange_new(struct http_server *srv,
                                        struct MHD_Connection *conn)
{
	struct http_exchange *ex = calloc(1, sizeof *ex);

	if (!ex)
		return NULL;
	ex->refs = 1; /* MHD's, until the request completes */
	pthread_mutex_init(&ex->lock, NULL);
	ex->srv = srv;
	ex->conn = conn;
	ex->link = http_conn_of(conn);
	ex->fd = -1;
	ex->start_ms = http_now_ms();
	return ex;
}

static void ref(struct http_exchange *ex)
{
	__atomic_add_fetch(&ex->refs, 1, __ATOMIC_RELAXED);
}

static void unref(struct http_exchange *ex)
{
	if (__atomic_sub_fetch(&ex->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (ex->session)
		http_session_done(ex->session);
	if (ex->stateless)
		http_stateless_release(ex->stateless);
	free(ex->body);
	free(ex->out);
	http_answers_count(ex->srv, &ex->held, 0);
	free(ex->id_key);
	pthread_mutex_destroy(&ex->lock);
	free(ex);
}

void http_exchange_release(void *ex)
{
	unref(ex);
}

/* The protocol object ex's message went to, or NULL. */
static struct tb_mcp *mcp_of(const struct http_exchange *ex)
{
	if (ex->session)
		return ex->session->mcp;
	return ex->stateless ? http_stateless_mcp(ex->stateless) : NULL;
}

bool http_exchange_admit(struct http_exchange *ex)
{
	struct http_server *srv = ex->srv;

	if (__atomic_load_n(&srv->stopping, __ATOMIC_ACQUIRE))
		return false;
	/* Parked calls hold no worker nor a place in the pool's queue:
	 * only the others count against the cap (the connection cap bounds
	 * them all). */
	size_t parked = srv->parker ? tb_parker_count(srv->parker) : 0;
	if (__atomic_add_fetch(&srv->inflight, 1, __ATOMIC_ACQ_REL) >
	    srv->max_inflight + parked) {
		__atomic_sub_fetch(&srv->inflight, 1, __ATOMIC_ACQ_REL);
		return false;
	}
	ex->counted = true;
	http_stats_inflight(1);
	return true;
}

int http_exchange_append(struct http_exchange *ex, const char *data, size_t n)
{
	if (n > TB_LINE_MAX - ex->len)
		return -1;
	if (ex->len + n > ex->cap) {
		size_t cap = ex->cap ? ex->cap : 1024;
		while (cap < ex->len + n)
			cap *= 2;
		if (cap > TB_LINE_MAX)
			cap = TB_LINE_MAX;
		char *grown = realloc(ex->body, cap);
		if (!grown)
			return -1;
		ex->body = grown;
		ex->cap = cap;
	}
	memcpy(ex->body + ex->len, data, n);
	ex->len += n;
	return 0;
}

/* Appends n bytes to the answer; lock held. */
static bool out_put(struct http_exchange *ex, const char *data, size_t n)
{
	if (ex->out_len + n > ex->out_cap) {
		size_t cap = ex->out_cap ? ex->out_cap : 256;
		while (cap < ex->out_len + n)
			cap *= 2;
		char *grown = realloc(ex->out, cap);
		if (!grown)
			return false;
		ex->out = grown;
		ex->out_cap = cap;
	}
	memcpy(ex->out + ex->out_len, data, n);
	ex->out_len += n;
	return true;
}

/* Suspends the connection until output comes and watches its socket; lock
 * held, MHD's thread. */
static void suspend_locked(struct http_exchange *ex)
{
	const union MHD_ConnectionInfo *ci = mhd.get_connection_info(
	    ex->conn, MHD_CONNECTION_INFO_CONNECTION_FD);

	ex->suspended = true;
	if (ci && ex->srv->watch) {
		ref(ex);
		if (http_watch_add(ex->srv->watch, ci->connect_fd, ex) == 0) {
			ex->watched = true;
			ex->fd = ci->connect_fd;
		} else {
			__atomic_sub_fetch(&ex->refs, 1, __ATOMIC_RELAXED);
		}
	}
	mhd.suspend_connection(ex->conn);
}

/* Ends the suspension, if any; lock held. Returns whether the caller must
 * resume the connection (after unlocking, with a reference held). */
static bool wake_locked(struct http_exchange *ex)
{
	if (!ex->suspended)
		return false;
	ex->suspended = false;
	if (ex->watched) {
		ex->watched = false;
		http_watch_remove(ex->srv->watch, ex->fd, ex);
	}
	return true;
}

static void sink_write(void *ctx, const char *text, size_t len, bool reply)
{
	struct http_exchange *ex = ctx;
	bool ok = true;

	pthread_mutex_lock(&ex->lock);
	if (ex->client_gone || ex->replied) {
		pthread_mutex_unlock(&ex->lock);
		return;
	}
	if (!reply)
		ex->sse = true;
	if (ex->sse)
		ok = out_put(ex, SSE_HEAD, strlen(SSE_HEAD)) &&
		     out_put(ex, text, len) &&
		     out_put(ex, SSE_TAIL, strlen(SSE_TAIL));
	else
		ok = out_put(ex, text, len);
	if (!ok)
		tb_log(TB_LOG_ERROR, "out of memory: a message is lost");
	http_answers_count(ex->srv, &ex->held, ex->out_len - ex->out_pos);
	ex->replied = reply;
	bool resume = wake_locked(ex);
	pthread_mutex_unlock(&ex->lock);
	if (resume)
		mhd.resume_connection(ex->conn);
}

static bool sink_reserve(void *ctx, size_t bytes, char *why, size_t whylen)
{
	struct http_exchange *ex = ctx;
	bool ok = true;

	pthread_mutex_lock(&ex->lock);
	if (!ex->client_gone && !ex->replied) {
		ok = http_answers_reserve(ex->srv, bytes, why, whylen);
		if (ok)
			ex->held += bytes;
	}
	pthread_mutex_unlock(&ex->lock);
	return ok;
}

static void sink_hold(void *ctx)
{
	struct http_exchange *ex = ctx;

	ref(ex);
	pthread_mutex_lock(&ex->lock);
	ex->holds++;
	pthread_mutex_unlock(&ex->lock);
}

static void sink_release(void *ctx)
{
	struct http_exchange *ex = ctx;

	pthread_mutex_lock(&ex->lock);
	bool resume = --ex->holds == 0 && wake_locked(ex);
	pthread_mutex_unlock(&ex->lock);
	if (resume)
		mhd.resume_connection(ex->conn);
	unref(ex);
}

void http_exchange_gone(void *arg)
{
	struct http_exchange *ex = arg;
	char *key = NULL;

	pthread_mutex_lock(&ex->lock);
	bool resume = ex->watched && wake_locked(ex);
	if (resume) {
		ex->client_gone = true;
		if (!ex->replied && ex->holds > 0 && ex->id_key)
			key = strdup(ex->id_key);
	}
	pthread_mutex_unlock(&ex->lock);
	if (!resume)
		return;
	tb_log(TB_LOG_DEBUG, "client hung up%s", key ? ": cancelling" : "");
	if (key && mcp_of(ex))
		tb_mcp_cancel_request(mcp_of(ex), key);
	free(key);
	mhd.resume_connection(ex->conn);
}

void http_exchange_auth_arm(struct http_exchange *ex)
{
	ref(ex);
	pthread_mutex_lock(&ex->lock);
	ex->auth_woken = false;
	pthread_mutex_unlock(&ex->lock);
}

void http_exchange_auth_disarm(struct http_exchange *ex)
{
	unref(ex);
}

bool http_exchange_auth_park(struct http_exchange *ex)
{
	bool park;

	pthread_mutex_lock(&ex->lock);
	park = !ex->auth_woken && !ex->client_gone;
	if (park)
		suspend_locked(ex);
	pthread_mutex_unlock(&ex->lock);
	return park;
}

void http_exchange_auth_ready(void *arg)
{
	struct http_exchange *ex = arg;

	pthread_mutex_lock(&ex->lock);
	ex->auth_woken = true;
	bool resume = wake_locked(ex);
	pthread_mutex_unlock(&ex->lock);
	if (resume)
		mhd.resume_connection(ex->conn);
	unref(ex);
}

/* Feeds an SSE response (MHD's thread). */
static ssize_t read_sse(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_exchange *ex = cls;
	ssize_t n;

	pthread_mutex_lock(&ex->lock);
	if (ex->client_gone) {
		n = MHD_CONTENT_READER_END_WITH_ERROR;
	} else if (ex->out_pos < ex->out_len) {
		size_t avail = ex->out_len - ex->out_pos;
		n = (ssize_t)(avail < max ? avail : max);
		memcpy(buf, ex->out + ex->out_pos, (size_t)n);
		ex->out_pos += (size_t)n;
		if (ex->out_pos == ex->out_len)
			ex->out_pos = ex->out_len = 0;
		http_answers_count(ex->srv, &ex->held,
		                   ex->out_len - ex->out_pos);
	} else if (ex->replied || ex->holds == 0) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		suspend_locked(ex);
		n = 0;
	}
	pthread_mutex_unlock(&ex->lock);
	return n;
}

static void free_sse(void *cls)
{
	unref(cls);
}

static enum MHD_Result reply_sse(struct http_exchange *ex)
{
	struct MHD_Response *r = mhd.create_response_from_callback(
	    MHD_SIZE_UNKNOWN, SSE_BLOCK, read_sse, ex, free_sse);

	if (!r)
		return MHD_NO;
	ref(ex);
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
	                        "text/event-stream");
	mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	return http_queue(ex, MHD_HTTP_OK, r);
}

/* MHD is done with a JSON reply: its bytes are no longer unsent. */
static void free_json(void *cls)
{
	struct http_exchange *ex = cls;

	pthread_mutex_lock(&ex->lock);
	free(ex->sent);
	ex->sent = NULL;
	http_answers_count(ex->srv, &ex->held, 0);
	pthread_mutex_unlock(&ex->lock);
	unref(ex);
}

/* The JSON reply in out (taken: it counts against the budget of unsent
 * answers until MHD frees it). */
static enum MHD_Result reply_json_out(struct http_exchange *ex, char *text,
                                      size_t len)
{
	bool with_id = ex->new_session && ex->session;
	unsigned status = !text        ? MHD_HTTP_OK
	                  : ex->modern ? http_modern_status(text, len)
	                               : http_legacy_status(text, len);
	struct MHD_Response *r =
	    text ? mhd.create_response_from_buffer_with_free_callback_cls(
	               len, text, free_json, ex)
	         : NULL;

	if (!r) {
		free(text);
		return MHD_NO;
	}
	ref(ex);
	ex->sent = text;
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
	                        "application/json");
	if (with_id)
		mhd.add_response_header(r, "Mcp-Session-Id", ex->session->id);
	return http_queue(ex, status, r);
}

/* Answers from what the session wrote so far, or suspends (MHD's
 * thread, inside the access handler). */
static enum MHD_Result respond(struct http_exchange *ex)
{
	pthread_mutex_lock(&ex->lock);
	if (ex->client_gone) {
		pthread_mutex_unlock(&ex->lock);
		return MHD_NO; /* closes the connection */
	}
	if (ex->sse) {
		pthread_mutex_unlock(&ex->lock);
		return reply_sse(ex);
	}
	if (ex->replied) {
		char *text = ex->out;
		size_t len = ex->out_len;
		ex->out = NULL;
		ex->out_len = ex->out_cap = 0;
		pthread_mutex_unlock(&ex->lock);
		return reply_json_out(ex, text, len);
	}
	if (!ex->is_request || ex->holds == 0) {
		pthread_mutex_unlock(&ex->lock);
		if (!ex->is_request)
			return http_reply_text(ex, MHD_HTTP_ACCEPTED, NULL, "");
		return reply_sse(ex); /* cancelled unanswered: empty */
	}
	suspend_locked(ex);
	pthread_mutex_unlock(&ex->lock);
	return MHD_YES;
}

enum MHD_Result http_exchange_resumed(struct http_exchange *ex)
{
	return respond(ex);
}

/* Checks MCP-Protocol-Version: absent is fine (2025-03-26 clients send
 * none); present, in a session of 2025-06-18 or later, it must be a
 * version this server serves (the spec's rule: 400 for an invalid or
 * unsupported one; the conformance suite sends an older served one). */
static enum MHD_Result check_version(struct http_exchange *ex, bool *ok)
{
	const char *want = http_header(ex, "MCP-Protocol-Version");
	const char *have = tb_mcp_version(ex->session->mcp);
	bool served = false;

	*ok = true;
	if (!want || strcmp(have, "2025-06-18") < 0)
		return MHD_YES;
	for (int i = 0; tb_mcp_versions[i]; i++)
		served = served || strcmp(want, tb_mcp_versions[i]) == 0;
	if (served)
		return MHD_YES;
	*ok = false;
	return http_reply_error(
	    ex, MHD_HTTP_BAD_REQUEST, -32000,
	    "Bad Request: header MCP-Protocol-Version: %.32s is not a "
	    "version this server serves (%s to %s)",
	    want, tb_mcp_versions[3], tb_mcp_versions[0]);
}

/* Finds or makes the session the message belongs to; answers itself
 * (returning false) when there is none. */
static bool bind_session(struct http_exchange *ex, const struct tb_rpc_msg *m,
                         enum MHD_Result *rc)
{
	const char *sid = http_header(ex, "Mcp-Session-Id");
	bool ok;

	if (!sid && m->kind == TB_RPC_REQUEST &&
	    strcmp(m->method, "initialize") == 0) {
		ex->session = http_session_create(ex->srv->sessions, &ex->who,
		                                  ex->remote);
		ex->new_session = ex->session != NULL;
		if (!ex->session)
			*rc = http_reply_error(ex, MHD_HTTP_SERVICE_UNAVAILABLE,
			                       TB_RPC_INTERNAL_ERROR,
			                       "Internal error: no session "
			                       "could be made");
		return ex->session != NULL;
	}
	if (!sid) {
		*rc = http_reply_error(ex, MHD_HTTP_BAD_REQUEST, -32000,
		                       "Bad Request: header Mcp-Session-Id: "
		                       "required on every request after "
		                       "initialize");
		return false;
	}
	ex->session = http_session_find(ex->srv->sessions, sid, &ex->who);
	if (!ex->session) {
		*rc = http_reply_error(ex, MHD_HTTP_NOT_FOUND, -32001,
		                       "Session not found: header "
		                       "Mcp-Session-Id: names no live session "
		                       "(it ended or never existed); send "
		                       "initialize for a new one");
		return false;
	}
	*rc = check_version(ex, &ok);
	return ok;
}

/* A modern message: checked, then handled by a protocol object of its
 * own, in no session (MHD's thread). */
static enum MHD_Result modern_post(struct http_exchange *ex,
                                   const struct tb_rpc_msg *m,
                                   const struct tb_mcp_sink *sink)
{
	enum MHD_Result rc;

	ex->modern = true;
	if (!http_modern_check(ex, m, &rc))
		return rc;
	ex->stateless =
	    http_stateless_open(ex->srv->stateless, &ex->who, ex->remote);
	if (!ex->stateless)
		return http_reply_error(ex, MHD_HTTP_SERVICE_UNAVAILABLE,
		                        TB_RPC_INTERNAL_ERROR,
		                        "Internal error: out of memory");
	ex->is_request = m->kind == TB_RPC_REQUEST;
	if (ex->is_request)
		ex->id_key = tb_rpc_id_key(m->id);
	tb_mcp_handle_message(http_stateless_mcp(ex->stateless), ex->body,
	                      ex->len, sink);
	free(ex->body);
	ex->body = NULL;
	ex->len = ex->cap = 0;
	return respond(ex);
}

enum MHD_Result http_exchange_post(struct http_exchange *ex)
{
	struct tb_rpc_msg m;
	enum MHD_Result rc = MHD_YES;
	struct tb_mcp_sink sink = {sink_write, ex, sink_hold, sink_release,
	                           sink_reserve};

	ex->fed = true;
	tb_rpc_parse(ex->body ? ex->body : "", ex->len, &m);
	if (m.kind == TB_RPC_INVALID) {
		rc = http_reply_json(
		    ex, MHD_HTTP_BAD_REQUEST,
		    tb_rpc_error(m.id, m.error_code, "%s", m.error_message));
		tb_rpc_msg_clear(&m);
		return rc;
	}
	if (m.kind == TB_RPC_REQUEST &&
	    !http_scope_allows(ex, m.method, m.params, &rc)) {
		tb_rpc_msg_clear(&m);
		return rc;
	}
	if (http_modern_message(ex, &m)) {
		rc = modern_post(ex, &m, &sink);
		tb_rpc_msg_clear(&m);
		return rc;
	}
	if (!bind_session(ex, &m, &rc)) {
		tb_rpc_msg_clear(&m);
		return rc;
	}
	ex->is_request = m.kind == TB_RPC_REQUEST;
	if (ex->is_request)
		ex->id_key = tb_rpc_id_key(m.id);
	tb_rpc_msg_clear(&m);
	bool live = http_session_feed(ex->session, ex->body, ex->len, &sink);
	free(ex->body);
	ex->body = NULL;
	ex->len = ex->cap = 0;
	if (ex->new_session) {
		if (tb_mcp_version(ex->session->mcp)[0]) {
			http_session_publish(ex->session);
		} else {
			http_session_end(ex->session);
			ex->new_session = false;
		}
	}
	if (!live)
		return http_reply_error(ex, MHD_HTTP_NOT_FOUND, -32001,
		                        "Session not found: header "
		                        "Mcp-Session-Id: the session ended");
	return respond(ex);
}

void http_exchange_completed(struct http_exchange *ex,
                             enum MHD_RequestTerminationCode toe)
{
	char *key = NULL;

	pthread_mutex_lock(&ex->lock);
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && !ex->client_gone) {
		ex->client_gone = true;
		if (ex->is_request && !ex->replied && ex->holds > 0 &&
		    ex->id_key)
			key = strdup(ex->id_key);
	}
	if (ex->watched) {
		ex->watched = false;
		http_watch_remove(ex->srv->watch, ex->fd, ex);
	}
	ex->suspended = false;
	pthread_mutex_unlock(&ex->lock);
	if (key && mcp_of(ex))
		tb_mcp_cancel_request(mcp_of(ex), key);
	free(key);
	if (ex->stateless)
		http_stateless_close(ex->stateless);
	if (ex->counted) {
		__atomic_sub_fetch(&ex->srv->inflight, 1, __ATOMIC_ACQ_REL);
		http_stats_inflight(-1);
	}
	if (ex->status)
		http_stats_duration(ex->status,
		                    (double)(http_now_ms() - ex->start_ms) /
		                        1000.0);
	unref(ex);
}
