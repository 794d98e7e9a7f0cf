/* Who is calling, at the HTTP transport's edge: the bearer token of the
 * Authorization header matched against the static tokens (or, with
 * oauth, verified as an access token of the authorization server), the
 * principal it names set on the exchange, the scopes a message needs
 * checked against it, and the protected resource metadata that tells
 * clients where tokens come from. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "base/audit.h"
#include "base/log.h"
#include "base/principal.h"
#include "transport/http_internal.h"
#include "transport/http_tokens.h"
#include "transport/oauth.h"

#define PRM_PATH "/.well-known/oauth-protected-resource"

/* Sets ex->remote to the peer's address ("" when unknown). */
static void note_remote(struct http_exchange *ex)
{
	const union MHD_ConnectionInfo *ci = mhd.get_connection_info(
	    ex->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	ex->remote[0] = '\0';
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
		          ex->remote, sizeof ex->remote);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6,
		          &((const struct sockaddr_in6 *)sa)->sin6_addr,
		          ex->remote, sizeof ex->remote);
}

/* Records a refusal in the audit trail: who (when known), from where,
 * what was asked, the status and the rule. Never the token. */
static void audit_refusal(struct http_exchange *ex, unsigned status,
                          const char *reason, const char *method,
                          const char *tool)
{
	char err[256];
	json_t *r;

	if (!tb_audit_enabled())
		return;
	r = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s}", "stage",
	              "refused", "status", (int)status, "reason", reason,
	              "principal", ex->who.name, "auth",
	              ex->who.name[0] ? tb_auth_kind_name(ex->who.how) : "",
	              "token_id", ex->who.token_id, "remote", ex->remote,
	              "transport", "http");
	if (r && method)
		json_object_set_new(r, "method", json_string(method));
	if (r && tool)
		json_object_set_new(r, "tool", json_string(tool));
	if (r && tb_audit_write(r, err, sizeof err) < 0)
		tb_log(TB_LOG_ERROR,
		       "audit: a refusal could not be recorded: %s", err);
	json_decref(r);
}

/* Answers 401 (or status) with the challenge for error and description,
 * and message as the JSON-RPC error's text; records the refusal. */
static enum MHD_Result refuse(struct http_exchange *ex, unsigned status,
                              const char *error, const char *description,
                              const char *message)
{
	char challenge[1536];

	audit_refusal(ex, status,
	              description ? description : "no Authorization header",
	              NULL, NULL);
	tb_http_challenge_401(&ex->srv->auth, error, description, challenge,
	                      sizeof challenge);
	return http_reply_error_with(
	    ex, status, MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge, message);
}

/* Answers 503 with Retry-After: the issuer's keys cannot be had now. */
static enum MHD_Result unavailable(struct http_exchange *ex, const char *why)
{
	char after[16];

	tb_log(TB_LOG_WARN, "oauth: the issuer's keys cannot be had: %s", why);
	snprintf(after, sizeof after, "%u",
	         tb_oauth_retry_after_s(ex->srv->opts->oauth));
	return http_reply_error_with(
	    ex, MHD_HTTP_SERVICE_UNAVAILABLE, MHD_HTTP_HEADER_RETRY_AFTER,
	    after,
	    "Service unavailable: the authorization server's keys cannot be "
	    "fetched now, so no access token can be checked; retry later");
}

/* Checks an OAuth access token (docs/oauth.md). While the issuer's keys
 * are fetched, a POST's first call lets the body come (checked again at
 * its end) and any other call suspends the connection until the fetch
 * ends (*rc MHD_YES, false): no fetch ever blocks MHD's thread. */
static bool authenticate_oauth(struct http_exchange *ex, const char *tok,
                               size_t len, enum MHD_Result *rc)
{
	char why[320], message[400];

	for (;;) {
		http_exchange_auth_arm(ex);
		enum tb_oauth_verdict v = tb_oauth_check(
		    ex->srv->opts->oauth, tok, len, &ex->who, why, sizeof why,
		    http_exchange_auth_ready, ex);
		if (v != TB_OAUTH_PENDING)
			http_exchange_auth_disarm(ex);
		switch (v) {
		case TB_OAUTH_OK:
			ex->auth_deferred = false;
			return true;
		case TB_OAUTH_REFUSED:
			snprintf(message, sizeof message,
			         "Unauthorized: header Authorization: %s", why);
			*rc = refuse(ex, MHD_HTTP_UNAUTHORIZED, "invalid_token",
			             why, message);
			return false;
		case TB_OAUTH_UNAVAILABLE:
			*rc = unavailable(ex, why);
			return false;
		case TB_OAUTH_PENDING:
			break;
		}
		if (ex->auth_may_defer) {
			ex->auth_deferred = true;
			return true;
		}
		if (http_exchange_auth_park(ex)) {
			*rc = MHD_YES;
			return false;
		}
	}
}

bool http_authenticate(struct http_exchange *ex, enum MHD_Result *rc)
{
	const struct tb_http_opts *o = ex->srv->opts;
	const char *header = http_header(ex, MHD_HTTP_HEADER_AUTHORIZATION);
	const struct tb_http_credential *cred;
	const char *tok;
	size_t len;

	note_remote(ex);
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
		ex->auth_deferred = false;
		return true;
	}
	if (o->oauth)
		return authenticate_oauth(ex, tok, len, rc);
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
	snprintf(message, sizeof message, "scope %s missing", missing);
	audit_refusal(ex, MHD_HTTP_FORBIDDEN, message, method, tool);
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
