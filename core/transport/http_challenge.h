/* What the HTTP transport says about authorization: the WWW-Authenticate
 * challenges of 401 and 403 (RFC 6750, RFC 9728 section 5.1), the scope
 * names a client is told to ask for, and the protected resource metadata
 * (RFC 9728). Pure functions. */
#ifndef TB_HTTP_CHALLENGE_H
#define TB_HTTP_CHALLENGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The parts of the server's options the challenges need (borrowed). */
struct tb_http_auth_view {
	const char *public_url;      /* NULL without oauth */
	const char *issuer;          /* NULL without oauth */
	const char *scope_names[3];  /* read, run, admin; NULL: canonical */
	const char *challenge_scope; /* NULL: the run scope's name */
};

/* The name the view gives one scope bit. */
const char *tb_http_scope_name(const struct tb_http_auth_view *v, unsigned bit);

/* The names of the scopes bits needs, closed under inclusion (run needs
 * read too), space separated, into out. */
void tb_http_scope_list(const struct tb_http_auth_view *v, unsigned bits,
                        char *out, size_t outlen);

/* The metadata's URL: public_url's origin, then
 * "/.well-known/oauth-protected-resource", then public_url's path. -1 when
 * public_url is no absolute http(s) URL or out is too small. */
int tb_http_metadata_url(const char *public_url, char *out, size_t outlen);

/* A 401's challenge. Without oauth: Bearer realm="taskbox". With it:
 * resource_metadata and scope, and when error is not NULL error= and
 * error_description= (its quotes and backslashes replaced). */
void tb_http_challenge_401(const struct tb_http_auth_view *v, const char *error,
                           const char *description, char *out, size_t outlen);

/* A 403's challenge for a call that needs the scopes of bits:
 * error="insufficient_scope" and scope= every scope it needs (those the
 * caller holds among them too: a client asks for exactly these), with
 * resource_metadata under oauth. */
void tb_http_challenge_403(const struct tb_http_auth_view *v, unsigned bits,
                           char *out, size_t outlen);

/* The protected resource metadata document (RFC 9728 section 2); NULL
 * without oauth or when out of memory. */
json_t *tb_http_resource_metadata(const struct tb_http_auth_view *v);

#endif /* TB_HTTP_CHALLENGE_H */
