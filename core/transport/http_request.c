/* The access handler: every request's checks in order (a sound head,
 * health, Host, Origin, the resource metadata, who is calling, path,
 * method, content type, size, admission), then the body to its exchange,
 * DELETE to its session, /metrics to the renderer. It moves the
 * connection through the phases of its deadlines (http_conns.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/audit.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/rpc_codes.h"
#include "protocol/jsonrpc.h"
#include "transport/http_internal.h"
#include "transport/http_policy.h"

static enum MHD_Result reply_metrics(struct http_exchange *ex)
{
	size_t len = 0;
	char *text = tb_metrics_render(&len);

	return http_reply_owned(ex, MHD_HTTP_OK, "text/plain; version=0.0.4",
	                        text, len, NULL, NULL);
}

static enum MHD_Result reply_not_allowed(struct http_exchange *ex)
{
	return http_reply_error_with(
	    ex, MHD_HTTP_METHOD_NOT_ALLOWED, MHD_HTTP_HEADER_ALLOW,
	    "POST, DELETE",
	    "Method not allowed: this endpoint takes POST (messages) and "
	    "DELETE (end the session)");
}

bool http_over_budget(struct MHD_Connection *conn)
{
	return http_conn_is_over_budget(http_conn_of(conn));
}

/* 503 for a connection past the descriptor budget, which then closes:
 * its descriptor is given back at once. */
static enum MHD_Result reply_over_budget(struct http_exchange *ex)
{
	return http_reply_error_with(
	    ex, MHD_HTTP_SERVICE_UNAVAILABLE, MHD_HTTP_HEADER_CONNECTION,
	    "close",
	    "Service unavailable: the server holds as many connections as "
	    "its open-file limit allows; retry later");
}

static enum MHD_Result reply_busy(struct http_exchange *ex)
{
	bool stopping = __atomic_load_n(&ex->srv->stopping, __ATOMIC_ACQUIRE);

	return http_reply_error_with(
	    ex, MHD_HTTP_SERVICE_UNAVAILABLE, MHD_HTTP_HEADER_RETRY_AFTER, "1",
	    stopping ? "Service unavailable: the server is shutting down"
	             : "Service unavailable: too many requests in flight; "
	               "retry later");
}

/* Whether a Content-Type names application/json (parameters allowed). */
static bool is_json(const char *type)
{
	size_t n = strlen("application/json");

	return type && strncasecmp(type, "application/json", n) == 0 &&
	       (type[n] == '\0' || type[n] == ';' || type[n] == ' ');
}

/* The Host and Origin checks every request but /healthz passes; answers
 * (returning false) the first one failed. */
static bool allowed(struct http_exchange *ex, enum MHD_Result *rc)
{
	const struct http_server *srv = ex->srv;
	const struct tb_http_opts *o = srv->opts;
	const char *host = http_header(ex, MHD_HTTP_HEADER_HOST);
	const char *origin = http_header(ex, "Origin");

	if (host &&
	    !tb_http_host_allowed(host, o->allowed_hosts, o->n_allowed_hosts,
	                          srv->listen_host)) {
		*rc = http_reply_error(ex, MHD_HTTP_FORBIDDEN, -32000,
		                       "Forbidden: header Host: %.128s is not "
		                       "an allowed host (allowed_hosts)",
		                       host);
		return false;
	}
	if (origin && !tb_http_origin_allowed(origin, o->allowed_origins,
	                                      o->n_allowed_origins)) {
		*rc = http_reply_error(ex, MHD_HTTP_FORBIDDEN, -32000,
		                       "Forbidden: header Origin: %.128s is "
		                       "not an allowed origin "
		                       "(allowed_origins)",
		                       origin);
		return false;
	}
	return true;
}

/* The answer to a request whose body was dropped: 413 past the cap, or
 * 500 when a POST's body found no memory. */
static enum MHD_Result reply_dropped(struct http_exchange *ex)
{
	if (ex->dropped <= TB_LINE_MAX)
		return http_reply_error(ex, MHD_HTTP_INTERNAL_SERVER_ERROR,
		                        -32603,
		                        "Internal error: out of memory for "
		                        "the body");
	return http_reply_error(ex, MHD_HTTP_CONTENT_TOO_LARGE, -32000,
	                        "Payload Too Large: the body: a message is at "
	                        "most %zu bytes",
	                        TB_LINE_MAX);
}

/* Takes n bytes of the body: a POST's kept up to the cap; past it, or
 * any other method's, counted and dropped. */
static void take_body(struct http_exchange *ex, bool post, const char *data,
                      size_t n)
{
	if (post && !ex->dropping) {
		if (http_exchange_append(ex, data, n) == 0)
			return;
		tb_log(TB_LOG_INFO,
		       "a body passed %zu bytes (or found no "
		       "memory): its rest is dropped",
		       TB_LINE_MAX);
		ex->dropped = ex->len;
		free(ex->body);
		ex->body = NULL;
		ex->len = ex->cap = 0;
	}
	ex->dropping = true;
	if (ex->dropped <= TB_LINE_MAX)
		ex->dropped += n;
}

/* A POST's headers: content type, size and admission. */
static enum MHD_Result post_headers(struct http_exchange *ex)
{
	const char *length = http_header(ex, MHD_HTTP_HEADER_CONTENT_LENGTH);

	if (!is_json(http_header(ex, MHD_HTTP_HEADER_CONTENT_TYPE)))
		return http_reply_error(
		    ex, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, -32000,
		    "Unsupported Media Type: header Content-Type: must be "
		    "application/json");
	if (length && strtoull(length, NULL, 10) > TB_LINE_MAX)
		return http_reply_error(ex, MHD_HTTP_CONTENT_TOO_LARGE, -32000,
		                        "Payload Too Large: header "
		                        "Content-Length: a message is at most "
		                        "%zu bytes",
		                        TB_LINE_MAX);
	if (!http_exchange_admit(ex))
		return reply_busy(ex);
	return MHD_YES; /* the body follows */
}

/* DELETE: ends the session named by Mcp-Session-Id. */
static enum MHD_Result delete_session(struct http_exchange *ex)
{
	const char *sid = http_header(ex, "Mcp-Session-Id");
	struct http_session *s;

	if (!sid)
		return http_reply_error(ex, MHD_HTTP_BAD_REQUEST, -32000,
		                        "Bad Request: header Mcp-Session-Id: "
		                        "required to end a session");
	s = http_session_find(ex->srv->sessions, sid, &ex->who);
	if (!s)
		return http_reply_error(
		    ex, MHD_HTTP_NOT_FOUND, -32001,
		    "Session not found: header "
		    "Mcp-Session-Id: names no live session");
	ex->session = s;
	http_session_end(s);
	return http_reply_text(ex, MHD_HTTP_NO_CONTENT, NULL, "");
}

/* Checks the headers and answers, or for a POST lets its body come. A
 * POST is checked on the first call, before its body is read; the other
 * methods once their request is read, so the connection stays open. */
static enum MHD_Result headers(struct http_exchange *ex, const char *url,
                               const char *method)
{
	enum MHD_Result rc;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
	bool health = get && strcmp(url, "/healthz") == 0;

	/* Host is required of every request but a health probe's (probes
	 * often speak HTTP/1.0 without one): the Host check fails closed. */
	if (!http_head_sound(ex, method, !health, &rc))
		return rc;
	if (health)
		return tb_audit_degraded()
		           ? http_reply_text(ex, MHD_HTTP_SERVICE_UNAVAILABLE,
		                             "text/plain",
		                             "degraded: the audit trail cannot "
		                             "be written")
		           : http_reply_text(ex, MHD_HTTP_OK, "text/plain",
		                             "ok");
	if (http_over_budget(ex->conn))
		return reply_over_budget(ex);
	if (!allowed(ex, &rc))
		return rc;
	if (get && http_is_resource_metadata(ex->srv, url))
		return http_reply_resource_metadata(ex);
	if (!http_authenticate(ex, &rc))
		return rc;
	if (!ex->auth_deferred)
		http_conn_authenticated(ex->srv->conns, ex->link);
	if (get && strcmp(url, "/metrics") == 0)
		return reply_metrics(ex);
	if (strcmp(url, ex->srv->path) != 0)
		return http_reply_error(ex, MHD_HTTP_NOT_FOUND, -32000,
		                        "Not Found: the MCP endpoint is %s",
		                        ex->srv->path);
	if (strcmp(method, MHD_HTTP_METHOD_POST) == 0)
		return post_headers(ex);
	if (strcmp(method, MHD_HTTP_METHOD_DELETE) == 0)
		return delete_session(ex);
	return reply_not_allowed(ex);
}

enum MHD_Result http_on_request(void *cls, struct MHD_Connection *conn,
                                const char *url, const char *method,
                                const char *version, const char *upload_data,
                                size_t *upload_data_size, void **req_cls)
{
	struct http_server *srv = cls;
	struct http_exchange *ex = *req_cls;
	bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	enum MHD_Result rc;

	if (!ex) {
		ex = http_exchange_new(srv, conn);
		if (!ex)
			return MHD_NO;
		*req_cls = ex;
		/* The head is in: its body's deadline starts. */
		http_conn_enter(srv->conns, ex->link, HTTP_CONN_BODY);
		if (!post)
			return MHD_YES;
		/* A POST's answer can be queued now or once its body is in:
		 * a token whose keys are being fetched is checked then. */
		ex->auth_may_defer = true;
		rc = headers(ex, url, method);
		ex->auth_may_defer = false;
		if (ex->status)
			http_conn_enter(srv->conns, ex->link, HTTP_CONN_BUSY);
		return rc;
	}
	if (*upload_data_size > 0) {
		take_body(ex, post, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!ex->status && !ex->fed)
		http_conn_enter(srv->conns, ex->link, HTTP_CONN_BUSY);
	if (ex->dropping && !ex->status && (post || ex->dropped > TB_LINE_MAX))
		return reply_dropped(ex);
	if (!post)
		return headers(ex, url, method);
	if (ex->auth_deferred) {
		if (!http_authenticate(ex, &rc))
			return rc;
		http_conn_authenticated(srv->conns, ex->link);
	}
	if (!ex->fed)
		return http_exchange_post(ex);
	return http_exchange_resumed(ex);
}
