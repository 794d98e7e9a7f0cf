/* The Streamable HTTP transport (MCP 2024-11-05 to 2025-11-25): one
 * endpoint, one MCP session per Mcp-Session-Id, bearer tokens, Origin and
 * Host allow-lists, JSON or SSE answers. */
#ifndef TB_HTTP_H
#define TB_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct tb_http_opts {
	const char *listen; /* "[ADDR:]PORT" */
	/* An inherited listening socket bound to listen (tb_sd_listen_fd);
	 * 0: none, the server binds listen itself. */
	int listen_fd;
	const char *path; /* the endpoint; NULL: "/mcp" */
	/* Accepted bearer tokens (borrowed); none: no token is asked for
	 * (loopback listen addresses only). */
	const char *const *tokens;
	size_t n_tokens;
	/* Allow-lists (borrowed); none: the loopback defaults. */
	const char *const *allowed_origins;
	size_t n_allowed_origins;
	const char *const *allowed_hosts;
	size_t n_allowed_hosts;
	unsigned session_idle_s;  /* 0: 30 min */
	unsigned idle_timeout_s;  /* per connection; 0: 30 s */
	unsigned max_connections; /* 0: 2048 */
	unsigned max_inflight;    /* requests in flight; 0: workers * 32 */
	unsigned workers;         /* tools/call threads; 0: 16 */
	const char *tls_cert;     /* PEM files, both or neither */
	const char *tls_key;
	bool test_tools;
};

/* Serves until SIGTERM or SIGINT, then refuses new work, cancels the calls,
 * ends every session (their cleanup), runs the shutdown hooks and returns
 * 0; returns 1 when it could not start (after logging why). */
int tb_serve_http(const struct tb_http_opts *opts);

#endif /* TB_HTTP_H */
