/* The challenges and metadata of http_challenge.h. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/principal.h"
#include "transport/http_challenge.h"

#define PRM_PATH "/.well-known/oauth-protected-resource"

static const unsigned bits_in_order[] = {TB_SCOPE_READ, TB_SCOPE_RUN,
                                         TB_SCOPE_ADMIN};

const char *tb_http_scope_name(const struct tb_http_auth_view *v, unsigned bit)
{
	for (size_t i = 0; i < 3; i++)
		if (bits_in_order[i] == bit)
			return v->scope_names[i] ? v->scope_names[i]
			                         : tb_scope_name(bit);
	return "";
}

void tb_http_scope_list(const struct tb_http_auth_view *v, unsigned bits,
                        char *out, size_t outlen)
{
	size_t used = 0;

	bits = tb_scopes_close(bits);
	out[0] = '\0';
	for (size_t i = 0; i < 3; i++) {
		if (!(bits & bits_in_order[i]))
			continue;
		int n =
		    snprintf(out + used, outlen - used, "%s%s", used ? " " : "",
		             tb_http_scope_name(v, bits_in_order[i]));
		if (n < 0 || (size_t)n >= outlen - used)
			return;
		used += (size_t)n;
	}
}

int tb_http_metadata_url(const char *public_url, char *out, size_t outlen)
{
	const char *rest, *path;
	size_t scheme;

	if (!public_url)
		return -1;
	if (strncasecmp(public_url, "https://", 8) == 0)
		scheme = 8;
	else if (strncasecmp(public_url, "http://", 7) == 0)
		scheme = 7;
	else
		return -1;
	rest = public_url + scheme;
	path = strchr(rest, '/');
	size_t origin = path ? (size_t)(path - public_url) : strlen(public_url);
	if (origin == scheme)
		return -1;
	if (path && strcmp(path, "/") == 0)
		path = NULL;
	int n = snprintf(out, outlen, "%.*s%s%s", (int)origin, public_url,
	                 PRM_PATH, path ? path : "");
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* Copies text into out as the inside of a quoted-string: quotes and
 * backslashes become apostrophes and slashes, control bytes spaces. */
static void quoted(const char *text, char *out, size_t outlen)
{
	size_t i = 0;

	for (; text[i] && i + 1 < outlen; i++) {
		unsigned char c = (unsigned char)text[i];
		out[i] = c == '"' ? '\'' : c == '\\' ? '/' : c < 0x20 ? ' ' : c;
	}
	out[i] = '\0';
}

void tb_http_challenge_401(const struct tb_http_auth_view *v, const char *error,
                           const char *description, char *out, size_t outlen)
{
	char url[1024], desc[256];
	const char *scope = v->challenge_scope
	                        ? v->challenge_scope
	                        : tb_http_scope_name(v, TB_SCOPE_RUN);

	if (!v->public_url ||
	    tb_http_metadata_url(v->public_url, url, sizeof url) < 0) {
		snprintf(out, outlen, "Bearer realm=\"taskbox\"");
		return;
	}
	if (!error) {
		snprintf(out, outlen,
		         "Bearer resource_metadata=\"%s\", scope=\"%s\"", url,
		         scope);
		return;
	}
	quoted(description ? description : "", desc, sizeof desc);
	snprintf(out, outlen,
	         "Bearer resource_metadata=\"%s\", scope=\"%s\", "
	         "error=\"%s\", error_description=\"%s\"",
	         url, scope, error, desc);
}

void tb_http_challenge_403(const struct tb_http_auth_view *v, unsigned bits,
                           char *out, size_t outlen)
{
	char url[1024], scopes[256];

	tb_http_scope_list(v, bits, scopes, sizeof scopes);
	if (!v->public_url ||
	    tb_http_metadata_url(v->public_url, url, sizeof url) < 0) {
		snprintf(
		    out, outlen,
		    "Bearer realm=\"taskbox\", error=\"insufficient_scope\", "
		    "scope=\"%s\"",
		    scopes);
		return;
	}
	snprintf(out, outlen,
	         "Bearer error=\"insufficient_scope\", scope=\"%s\", "
	         "resource_metadata=\"%s\"",
	         scopes, url);
}

json_t *tb_http_resource_metadata(const struct tb_http_auth_view *v)
{
	json_t *scopes;

	if (!v->public_url || !v->issuer)
		return NULL;
	scopes = json_array();
	for (size_t i = 0; scopes && i < 3; i++)
		json_array_append_new(scopes, json_string(tb_http_scope_name(
		                                  v, bits_in_order[i])));
	return json_pack("{s:s, s:[s], s:o*, s:[s], s:s}", "resource",
	                 v->public_url, "authorization_servers", v->issuer,
	                 "scopes_supported", scopes, "bearer_methods_supported",
	                 "header", "resource_name", "taskbox");
}
