/* Who is calling, at the HTTP transport's edge: the bearer token of the
 * Authorization header matched against the static tokens (or, with
 * oauth, verified as an access token of the authorization server), the
 * principal it names set on the exchange, the scopes a message needs
 * checked against it, and the protected resource metadata that tells
 * clients where tokens come from. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/principal.h"
#include "transport/http_internal.h"
#include "transport/http_tokens.h"

#define PRM_PATH "/.well-known/oauth-protected-resource"

/* Answers 401 (or status) with the challenge for error and description,
 * and message as the JSON-RPC error's text. */
static enum MHD_Result refuse(struct http_exchange *ex, unsigned status,
                              const char *error, const char *description,
                              const char *message)
{
	char challenge[1536];

	tb_http_challenge_401(&ex->srv->auth, error, description, challenge,
	                      sizeof challenge);
	return http_reply_error_with(
	    ex, status, MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge, message);
}

bool http_authenticate(struct http_exchange *ex, enum MHD_Result *rc)
{
	const struct tb_http_opts *o = ex->srv->opts;
	const char *header = http_header(ex, MHD_HTTP_HEADER_AUTHORIZATION);
	const struct tb_http_credential *cred;
	const char *tok;
	size_t len;

	if (mhd.lookup_connection_value(ex->conn, MHD_GET_ARGUMENT_KIND,
	                                "access_token")) {
		*rc = refuse(ex, MHD_HTTP_BAD_REQUEST, "invalid_request",
		             "a token is accepted only in the Authorization "
		             "header",
		             "Bad Request: query access_token: a token is "
		             "accepted only in the Authorization header, as "
		             "\"Bearer TOKEN\"");
		return false;
	}
	if (o->n_credentials == 0 && !o->oauth) {
		tb_principal_local(&ex->who, TB_AUTH_NONE);
		return true;
	}
	if (!header) {
		*rc = refuse(ex, MHD_HTTP_UNAUTHORIZED, NULL, NULL,
		             "Unauthorized: header Authorization: required, "
		             "as \"Bearer TOKEN\"");
		return false;
	}
	if (!tb_http_bearer(header, &tok, &len)) {
		*rc = refuse(ex, MHD_HTTP_UNAUTHORIZED, "invalid_token",
		             "the Authorization header is not \"Bearer TOKEN\"",
		             "Unauthorized: header Authorization: must be "
		             "\"Bearer TOKEN\"");
		return false;
	}
	cred =
	    tb_http_credential_find(o->credentials, o->n_credentials, tok, len);
	if (cred) {
		ex->who = cred->who;
		return true;
	}
	*rc = refuse(ex, MHD_HTTP_UNAUTHORIZED, "invalid_token",
	             "the token is not one this server accepts",
	             "Unauthorized: header Authorization: the bearer token "
	             "is not one this server accepts");
	return false;
}

/* The names of exactly the scope bits of bits, space separated. */
static void names_of(const struct tb_http_auth_view *v, unsigned bits,
                     char *out, size_t outlen)
{
	static const unsigned order[] = {TB_SCOPE_READ, TB_SCOPE_RUN,
	                                 TB_SCOPE_ADMIN};
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < 3 && used < outlen; i++)
		if (bits & order[i]) {
			int n = snprintf(out + used, outlen - used, "%s%s",
			                 used ? " " : "",
			                 tb_http_scope_name(v, order[i]));
			used += n > 0 ? (size_t)n : 0;
		}
	if (!out[0])
		snprintf(out, outlen, "none");
}

bool http_scope_allows(struct http_exchange *ex, const char *method,
                       const json_t *params, enum MHD_Result *rc)
{
	unsigned need = tb_scopes_close(tb_mcp_scope_needed(method, params));
	const char *tool = json_string_value(json_object_get(params, "name"));
	char challenge[1536], missing[256], held[256], message[1024];

	if ((need & ~ex->who.scopes) == 0)
		return true;
	tb_http_challenge_403(&ex->srv->auth, need, challenge,
	                      sizeof challenge);
	names_of(&ex->srv->auth, need & ~ex->who.scopes, missing,
	         sizeof missing);
	names_of(&ex->srv->auth, ex->who.scopes, held, sizeof held);
	if (strcmp(method, "tools/call") != 0)
		tool = NULL;
	tb_log(TB_LOG_INFO, "refused %s%s%s for principal %s: scope %s missing",
	       method, tool ? " " : "", tool ? tool : "", ex->who.name,
	       missing);
	snprintf(message, sizeof message,
	         "Forbidden: %s%s%.64s needs scope %s, which principal %s "
	         "does not hold (it holds: %s)",
	         method, tool ? " " : "", tool ? tool : "", missing,
	         ex->who.name, held);
	*rc = http_reply_error_with(ex, MHD_HTTP_FORBIDDEN,
	                            MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge,
	                            message);
	return false;
}

/* The path of public_url, or "" (an origin alone, or no URL). */
static const char *public_path(const char *url)
{
	const char *rest = url ? strstr(url, "://") : NULL;
	const char *path = rest ? strchr(rest + 3, '/') : NULL;

	return path && strcmp(path, "/") != 0 ? path : "";
}

bool http_is_resource_metadata(const struct http_server *srv, const char *url)
{
	size_t n = strlen(PRM_PATH);

	if (!srv->auth.public_url || !srv->auth.issuer ||
	    strncmp(url, PRM_PATH, n) != 0)
		return false;
	url += n;
	return url[0] == '\0' || strcmp(url, srv->path) == 0 ||
	       strcmp(url, public_path(srv->auth.public_url)) == 0;
}

enum MHD_Result http_reply_resource_metadata(struct http_exchange *ex)
{
	json_t *doc = tb_http_resource_metadata(&ex->srv->auth);

	if (!doc)
		return MHD_NO;
	return http_reply_json(ex, MHD_HTTP_OK, doc);
}
