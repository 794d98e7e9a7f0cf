/* The pure checks of the HTTP transport: the Origin and Host allow-lists
 * (the tokens are http_tokens.h's). */
#ifndef TB_HTTP_POLICY_H
#define TB_HTTP_POLICY_H

#include <stdbool.h>
#include <stddef.h>

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

#endif /* TB_HTTP_POLICY_H */
