/* "http.public_url" and "http.oauth" (docs/oauth.md): every bad field
 * named as "$.http.oauth.FIELD: rule", and the copy into struct
 * tb_config_oauth. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/http_url.h"
#include "host/config_oauth.h"

#define AUDIENCES_MAX 16
#define LEEWAY_MAX_S 600

/* Whether s is one scope token of RFC 6749 section 3.3 (or, with list,
 * several separated by single spaces). */
static bool scope_ok(const char *s, bool list)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 256 || s[0] == ' ' || s[n - 1] == ' ')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == ' ' && list && s[i + 1] != ' ')
			continue;
		if (c < 0x21 || c > 0x7e || c == '"' || c == '\\')
			return false;
	}
	return true;
}

static void check_url(struct tb_config_problems *p, json_t *oauth,
                      const char *key, bool required)
{
	json_t *v = json_object_get(oauth, key);
	char path[48];

	snprintf(path, sizeof path, "$.http.oauth.%s", key);
	if (!v && required)
		tb_config_problem(
		    p, path,
		    "required (the authorization server's "
		    "issuer identifier, exactly as in its tokens)");
	else if (v && !tb_url_https_or_loopback(json_string_value(v)))
		tb_config_problem(p, path,
		                  "must be an https URL (http only to a "
		                  "loopback address)");
}

static void check_audience(struct tb_config_problems *p, json_t *v)
{
	size_t i;
	json_t *a;

	if (!v)
		return;
	if (!json_is_array(v) || json_array_size(v) == 0 ||
	    json_array_size(v) > AUDIENCES_MAX) {
		tb_config_problem(p, "$.http.oauth.audience",
		                  "must be a list of 1 to %d strings (default: "
		                  "[public_url])",
		                  AUDIENCES_MAX);
		return;
	}
	json_array_foreach(v, i, a)
	{
		const char *s = json_string_value(a);
		if (!s || !*s || strlen(s) > 1024) {
			char path[48];
			snprintf(path, sizeof path,
			         "$.http.oauth.audience[%zu]", i);
			tb_config_problem(p, path,
			                  "must be a non-empty string (at most "
			                  "1024 characters)");
		}
	}
}

static void check_scopes(struct tb_config_problems *p, json_t *v)
{
	static const char *const keys[] = {"read", "run", "admin", NULL};
	const char *names[3] = {NULL, NULL, NULL};

	if (!v)
		return;
	if (!json_is_object(v)) {
		tb_config_problem(p, "$.http.oauth.scopes",
		                  "must be an object, not %s",
		                  tb_config_type_name(v));
		return;
	}
	tb_config_unknown_keys(p, "$.http.oauth.scopes", v, keys,
	                       "read, run, admin");
	for (int i = 0; i < 3; i++) {
		json_t *s = json_object_get(v, keys[i]);
		char path[48];
		snprintf(path, sizeof path, "$.http.oauth.scopes.%s", keys[i]);
		if (!s)
			continue;
		names[i] = json_string_value(s);
		if (!scope_ok(names[i], false))
			tb_config_problem(
			    p, path,
			    "must be one scope name (printable "
			    "ASCII, no space, quote or backslash)");
		for (int k = 0; k < i; k++)
			if (names[k] && names[i] &&
			    strcmp(names[k], names[i]) == 0)
				tb_config_problem(p, path,
				                  "must differ from "
				                  "$.http.oauth.scopes.%s",
				                  keys[k]);
	}
}

static void check_oauth(struct tb_config_problems *p, json_t *oauth)
{
	static const char *const allowed[] = {
	    "issuer",   "jwks_uri", "audience",        "principal_claim",
	    "leeway_s", "scopes",   "challenge_scope", NULL};
	json_t *v;

	tb_config_unknown_keys(p, "$.http.oauth", oauth, allowed,
	                       "issuer, jwks_uri, audience, principal_claim, "
	                       "leeway_s, scopes, challenge_scope");
	check_url(p, oauth, "issuer", true);
	check_url(p, oauth, "jwks_uri", false);
	check_audience(p, json_object_get(oauth, "audience"));
	v = json_object_get(oauth, "principal_claim");
	if (v && (!json_is_string(v) || json_string_length(v) == 0 ||
	          json_string_length(v) > 64))
		tb_config_problem(p, "$.http.oauth.principal_claim",
		                  "must be the name of a claim (1 to 64 "
		                  "characters; default \"sub\")");
	v = json_object_get(oauth, "leeway_s");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
	          json_integer_value(v) > LEEWAY_MAX_S))
		tb_config_problem(p, "$.http.oauth.leeway_s",
		                  "must be an integer 0..%d (seconds; default "
		                  "60)",
		                  LEEWAY_MAX_S);
	check_scopes(p, json_object_get(oauth, "scopes"));
	v = json_object_get(oauth, "challenge_scope");
	if (v && !scope_ok(json_string_value(v), true))
		tb_config_problem(p, "$.http.oauth.challenge_scope",
		                  "must be scope names separated by single "
		                  "spaces (default: the run scope's name)");
}

void tb_config_check_oauth(struct tb_config_problems *p, json_t *http)
{
	json_t *url = json_object_get(http, "public_url");
	json_t *oauth = json_object_get(http, "oauth");

	if (url && !tb_url_absolute_http(json_string_value(url)))
		tb_config_problem(p, "$.http.public_url",
		                  "must be an absolute http or https URL (the "
		                  "URL clients use for the MCP endpoint; no "
		                  "user info or fragment)");
	if (!oauth)
		return;
	if (!json_is_object(oauth)) {
		tb_config_problem(p, "$.http.oauth",
		                  "must be an object, not %s",
		                  tb_config_type_name(oauth));
		return;
	}
	if (!url)
		tb_config_problem(p, "$.http.public_url",
		                  "required with $.http.oauth (the URL clients "
		                  "use for the MCP endpoint: the resource's "
		                  "identifier)");
	check_oauth(p, oauth);
}

static char *dup_string(json_t *obj, const char *key, bool *failed)
{
	const char *s = json_string_value(json_object_get(obj, key));
	char *copy = s ? strdup(s) : NULL;

	if (s && !copy)
		*failed = true;
	return copy;
}

struct tb_config_oauth *tb_config_take_oauth(json_t *oauth, bool *failed)
{
	static const char *const keys[] = {"read", "run", "admin"};
	json_t *aud = json_object_get(oauth, "audience"), *scopes, *v;
	struct tb_config_oauth *o;
	size_t i;

	if (!oauth)
		return NULL;
	o = calloc(1, sizeof *o);
	if (!o) {
		*failed = true;
		return NULL;
	}
	o->issuer = dup_string(oauth, "issuer", failed);
	o->jwks_uri = dup_string(oauth, "jwks_uri", failed);
	o->principal_claim = dup_string(oauth, "principal_claim", failed);
	o->challenge_scope = dup_string(oauth, "challenge_scope", failed);
	v = json_object_get(oauth, "leeway_s");
	o->leeway_s = v ? (int)json_integer_value(v) : -1;
	scopes = json_object_get(oauth, "scopes");
	for (int k = 0; k < 3; k++)
		o->scopes[k] = dup_string(scopes, keys[k], failed);
	if (json_array_size(aud) > 0) {
		o->audience = calloc(json_array_size(aud), sizeof *o->audience);
		if (!o->audience)
			*failed = true;
		json_array_foreach(aud, i, v) if (o->audience)
		{
			o->audience[i] = strdup(json_string_value(v));
			if (!o->audience[i])
				*failed = true;
			o->n_audience = i + 1;
		}
	}
	return o;
}

void tb_config_free_oauth(struct tb_config_oauth *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n_audience; i++)
		free(o->audience[i]);
	free(o->audience);
	for (int k = 0; k < 3; k++)
		free(o->scopes[k]);
	free(o->issuer);
	free(o->jwks_uri);
	free(o->principal_claim);
	free(o->challenge_scope);
	free(o);
}
