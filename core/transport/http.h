/* The Streamable HTTP transport (MCP 2024-11-05 to 2025-11-25): one
 * endpoint, one MCP session per Mcp-Session-Id, bearer tokens, Origin and
 * Host allow-lists, JSON or SSE answers. */
#ifndef TB_HTTP_H
#define TB_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct tb_http_credential;
struct tb_oauth;

struct tb_http_opts {
	const char *listen; /* "[ADDR:]PORT" */
	/* An inherited listening socket bound to listen (tb_sd_listen_fd);
	 * 0: none, the server binds listen itself. */
	int listen_fd;
	const char *path; /* the endpoint; NULL: "/mcp" */
	/* Static bearer tokens and their principals (borrowed). With none
	 * and no oauth, no token is asked for and every request is the
	 * principal "local" (loopback listen addresses only). */
	const struct tb_http_credential *credentials;
	size_t n_credentials;
	/* OAuth 2.1 (all NULL without it): the URL clients use for the
	 * endpoint (the resource's identifier), the authorization server,
	 * and the verifier of its access tokens. */
	const char *public_url;
	const char *issuer;
	struct tb_oauth *oauth;
	/* The names tokens give the scopes read, run and admin (NULL: the
	 * canonical taskbox:read, ...), and the scope a 401 tells clients
	 * to ask for first (NULL: run's name). */
	const char *scope_names[3];
	const char *challenge_scope;
	/* Allow-lists (borrowed); none: the loopback defaults. */
	const char *const *allowed_origins;
	size_t n_allowed_origins;
	const char *const *allowed_hosts;
	size_t n_allowed_hosts;
	unsigned session_idle_s; /* 0: 30 min */
	unsigned idle_timeout_s; /* per connection; 0: 30 s */
	/* A request's headers complete within header_timeout_s of its start
	 * (0: 10 s; idle_timeout_s more for an authenticated connection's
	 * next request), its body within body_timeout_s of its headers (0:
	 * 60 s); connections not yet authenticated at most
	 * max_unauthenticated (0: a quarter of max_connections). */
	unsigned header_timeout_s;
	unsigned body_timeout_s;
	unsigned max_unauthenticated;
	unsigned max_connections; /* 0: 2048 */
	unsigned max_inflight;    /* requests in flight; 0: workers * 32 */
	unsigned workers;         /* tools/call threads; 0: 16 */
	size_t answer_budget;     /* bytes of answers not yet taken by their
	                             clients; 0: 64 MiB */
	const char *tls_cert;     /* PEM files, both or neither */
	const char *tls_key;
	bool test_tools;
};

/* Serves until SIGTERM or SIGINT, then refuses new work, cancels the calls,
 * ends every session (their cleanup), runs the shutdown hooks and returns
 * 0; returns 1 when it could not start (after logging why). */
int tb_serve_http(const struct tb_http_opts *opts);

#endif /* TB_HTTP_H */
