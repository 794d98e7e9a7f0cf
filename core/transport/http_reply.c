/* Queuing answers: JSON-RPC error bodies, plain text, and the count of
 * every status sent. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "protocol/jsonrpc.h"
#include "transport/http_internal.h"

enum MHD_Result http_queue(struct http_exchange *ex, unsigned status,
                           struct MHD_Response *response)
{
	enum MHD_Result rc;

	if (!response) {
		tb_log(TB_LOG_ERROR, "out of memory building an answer");
		return MHD_NO;
	}
	rc = mhd.queue_response(ex->conn, status, response);
	mhd.destroy_response(response);
	if (rc == MHD_YES) {
		ex->status = status;
		http_stats_response(status);
	}
	return rc;
}

enum MHD_Result http_reply_text(struct http_exchange *ex, unsigned status,
                                const char *type, const char *text)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(
	    strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);

	if (r && type)
		mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return http_queue(ex, status, r);
}

enum MHD_Result http_reply_owned(struct http_exchange *ex, unsigned status,
                                 const char *type, char *text, size_t len,
                                 const char *name, const char *value)
{
	if (!text)
		return MHD_NO;
	struct MHD_Response *r =
	    mhd.create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (name)
		mhd.add_response_header(r, name, value);
	return http_queue(ex, status, r);
}

/* http_reply_json with one more header (name NULL: none). */
static enum MHD_Result json_with(struct http_exchange *ex, unsigned status,
                                 json_t *msg, const char *name,
                                 const char *value)
{
	char *text = msg ? tb_rpc_dump(msg) : NULL;

	json_decref(msg);
	return http_reply_owned(ex, status, "application/json", text,
	                        text ? strlen(text) : 0, name, value);
}

enum MHD_Result http_reply_json(struct http_exchange *ex, unsigned status,
                                json_t *msg)
{
	return json_with(ex, status, msg, NULL, NULL);
}

enum MHD_Result http_reply_error(struct http_exchange *ex, unsigned status,
                                 int code, const char *fmt, ...)
{
	char message[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	return json_with(ex, status, tb_rpc_error(NULL, code, "%s", message),
	                 NULL, NULL);
}

enum MHD_Result http_reply_error_with(struct http_exchange *ex, unsigned status,
                                      const char *name, const char *value,
                                      const char *message)
{
	return json_with(ex, status, tb_rpc_error(NULL, -32000, "%s", message),
	                 name, value);
}

struct http_conn *http_conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    mhd.get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

const char *http_header(struct http_exchange *ex, const char *name)
{
	return mhd.lookup_connection_value(ex->conn, MHD_HEADER_KIND, name);
}
