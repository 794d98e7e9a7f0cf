/* The pure checks of the HTTP transport: bearer tokens compared in
 * constant time, and the Origin and Host allow-lists. */
#ifndef TB_HTTP_POLICY_H
#define TB_HTTP_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/* Whether given (glen bytes) equals token, in a time that depends on the
 * token's length only. */
bool tb_http_token_equal(const char *given, size_t glen, const char *token);

/* Whether an Authorization header value is "Bearer T" (scheme in any case)
 * with T one of tokens; every token is compared. */
bool tb_http_bearer_ok(const char *header, const char *const *tokens, size_t n);

/* Whether an Origin header value is allowed: by allowed ("scheme://host"
 * matches any port, "scheme://host:port" that port), or when n is 0 by the
 * defaults: http and https on localhost, 127.0.0.1 and [::1]. */
bool tb_http_origin_allowed(const char *origin, const char *const *allowed,
                            size_t n);

/* Whether a Host header value is allowed: by allowed ("host" matches any
 * port, "host:port" that port) or when n is 0 by the loopback names
 * (localhost, 127.0.0.1, [::1]) on any port; and always listen ("host:port"
 * of the listen address, may be NULL). Names compare in any case. */
bool tb_http_host_allowed(const char *host, const char *const *allowed,
                          size_t n, const char *listen);

/* Appends the tokens of text (separated by commas or line breaks, blanks
 * around them dropped) to *v (*n of them, malloc'd). Returns 0, or -1
 * with the rule in why (a token holds a byte that is not visible ASCII) or
 * when out of memory. */
int tb_http_tokens_split(const char *text, char ***v, size_t *n, char *why,
                         size_t whylen);

#endif /* TB_HTTP_POLICY_H */
