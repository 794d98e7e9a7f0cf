/* The config file's "http" section: its validation (every bad field named
 * as "$.http.FIELD: rule") and its copy into struct tb_config_http. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/listen_addr.h"
#include "host/config_http.h"
#include "host/config_oauth.h"

static const struct {
	const char *key;
	json_int_t max;
} limits[] = {
    {"session_idle_s", 7 * 24 * 3600}, {"idle_timeout_s", 3600},
    {"header_timeout_s", 3600},        {"body_timeout_s", 3600},
    {"max_unauthenticated", 1000000},  {"max_connections", 1000000},
    {"max_inflight", 1000000},         {"answer_budget_mib", 1048576},
};
#define N_LIMITS (sizeof limits / sizeof *limits)

static void check_string_list(struct tb_config_problems *p, json_t *http,
                              const char *key, const char *rule,
                              const char *needle)
{
	json_t *list = json_object_get(http, key), *v;
	char path[96];
	size_t i;

	if (!list)
		return;
	snprintf(path, sizeof path, "$.http.%s", key);
	if (!json_is_array(list)) {
		tb_config_problem(p, path,
		                  "must be an array of strings, not %s",
		                  tb_config_type_name(list));
		return;
	}
	json_array_foreach(list, i, v)
	{
		snprintf(path, sizeof path, "$.http.%s[%zu]", key, i);
		const char *s = json_string_value(v);
		const char *rest = s && needle ? strstr(s, needle) : s;
		if (rest && needle)
			rest += strlen(needle);
		if (!rest || !*rest || strpbrk(rest, " /?#") != NULL)
			tb_config_problem(p, path, "must be %s", rule);
	}
}

static void check_tls(struct tb_config_problems *p, json_t *tls)
{
	static const char *const keys[] = {"cert", "key"};

	if (!tls)
		return;
	if (!json_is_object(tls)) {
		tb_config_problem(p, "$.http.tls", "must be an object, not %s",
		                  tb_config_type_name(tls));
		return;
	}
	tb_config_unknown_keys(p, "$.http.tls", tls,
	                       (const char *const[]){"cert", "key", NULL},
	                       "cert, key");
	for (int i = 0; i < 2; i++) {
		json_t *v = json_object_get(tls, keys[i]);
		char path[32];
		snprintf(path, sizeof path, "$.http.tls.%s", keys[i]);
		if (!v)
			tb_config_problem(p, path, "required (a PEM file)");
		else if (!json_is_string(v) || !*json_string_value(v))
			tb_config_problem(p, path,
			                  "must be the path of a PEM file");
	}
}

static void check_path(struct tb_config_problems *p, json_t *v)
{
	const char *s = json_string_value(v);

	if (!v)
		return;
	if (!s || s[0] != '/' || strlen(s) > 256 || strpbrk(s, "?# ") ||
	    strcmp(s, "/healthz") == 0 || strcmp(s, "/metrics") == 0)
		tb_config_problem(p, "$.http.path",
		                  "must be a URL path starting with '/' (at "
		                  "most 256 characters, no '?', '#' or space; "
		                  "not /healthz or /metrics)");
}

/* max_unauthenticated leaves room for authenticated connections. */
static void check_unauthenticated(struct tb_config_problems *p, json_t *http)
{
	json_int_t cap =
	    json_integer_value(json_object_get(http, "max_unauthenticated"));
	json_t *max = json_object_get(http, "max_connections");
	json_int_t connections = max ? json_integer_value(max) : 2048;

	if (cap > 0 && connections > 0 && cap >= connections)
		tb_config_problem(p, "$.http.max_unauthenticated",
		                  "must be less than max_connections (%lld), "
		                  "or connections that have not authenticated "
		                  "could take every one",
		                  (long long)connections);
}

void tb_config_check_http(struct tb_config_problems *p, json_t *http)
{
	static const char *const allowed[] = {"listen",
	                                      "path",
	                                      "token_env",
	                                      "token_file",
	                                      "allowed_origins",
	                                      "allowed_hosts",
	                                      "session_idle_s",
	                                      "idle_timeout_s",
	                                      "header_timeout_s",
	                                      "body_timeout_s",
	                                      "max_unauthenticated",
	                                      "max_connections",
	                                      "max_inflight",
	                                      "answer_budget_mib",
	                                      "tls",
	                                      "public_url",
	                                      "oauth",
	                                      NULL};
	json_t *v;
	char why[160];

	if (!http)
		return;
	if (!json_is_object(http)) {
		tb_config_problem(p, "$.http", "must be an object, not %s",
		                  tb_config_type_name(http));
		return;
	}
	if (json_object_get(http, "token") || json_object_get(http, "tokens"))
		tb_config_problem(p, "$.http.token",
		                  "tokens are never written in the config: "
		                  "name them with token_env or token_file");
	tb_config_unknown_keys(
	    p, "$.http", http, allowed,
	    "listen, path, token_env, token_file, allowed_origins, "
	    "allowed_hosts, session_idle_s, idle_timeout_s, header_timeout_s, "
	    "body_timeout_s, max_connections, max_unauthenticated, "
	    "max_inflight, answer_budget_mib, tls, public_url, oauth");
	struct tb_listen_addr addr;
	v = json_object_get(http, "listen");
	if (v && (!json_is_string(v) ||
	          tb_listen_addr_parse(json_string_value(v), &addr, why,
	                               sizeof why) < 0))
		tb_config_problem(p, "$.http.listen", "%s",
		                  json_is_string(v) ? why : "must be a string");
	check_path(p, json_object_get(http, "path"));
	v = json_object_get(http, "token_env");
	if (v && !tb_config_env_name_ok(json_string_value(v)))
		tb_config_problem(p, "$.http.token_env",
		                  "must be an environment variable name "
		                  "matching ^[A-Za-z_][A-Za-z0-9_]*$");
	v = json_object_get(http, "token_file");
	if (v && (!json_is_string(v) || !*json_string_value(v)))
		tb_config_problem(p, "$.http.token_file",
		                  "must be the path of a file of tokens");
	check_string_list(p, http, "allowed_origins",
	                  "an origin \"scheme://host[:port]\"", "://");
	check_string_list(p, http, "allowed_hosts",
	                  "a host \"name[:port]\" (no scheme or path)", NULL);
	for (size_t i = 0; i < N_LIMITS; i++) {
		char path[48];
		v = json_object_get(http, limits[i].key);
		snprintf(path, sizeof path, "$.http.%s", limits[i].key);
		if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
		          json_integer_value(v) > limits[i].max))
			tb_config_problem(p, path, "must be an integer 1..%lld",
			                  (long long)limits[i].max);
	}
	check_unauthenticated(p, http);
	check_tls(p, json_object_get(http, "tls"));
	tb_config_check_oauth(p, http);
}

static char *dup_member(json_t *obj, const char *key, bool *failed)
{
	const char *s = json_string_value(json_object_get(obj, key));
	char *copy = s ? strdup(s) : NULL;

	if (s && !copy)
		*failed = true;
	return copy;
}

static char **dup_list(json_t *obj, const char *key, size_t *n, bool *failed)
{
	json_t *list = json_object_get(obj, key), *v;
	char **out;
	size_t i;

	*n = 0;
	if (json_array_size(list) == 0)
		return NULL;
	out = calloc(json_array_size(list), sizeof *out);
	if (!out) {
		*failed = true;
		return NULL;
	}
	json_array_foreach(list, i, v)
	{
		out[i] = strdup(json_string_value(v));
		if (!out[i])
			*failed = true;
		*n = i + 1;
	}
	return out;
}

struct tb_config_http *tb_config_take_http(json_t *http, bool *failed)
{
	struct tb_config_http *h;
	json_t *tls = json_object_get(http, "tls");

	if (!http)
		return NULL;
	h = calloc(1, sizeof *h);
	if (!h) {
		*failed = true;
		return NULL;
	}
	h->listen = dup_member(http, "listen", failed);
	h->path = dup_member(http, "path", failed);
	h->token_env = dup_member(http, "token_env", failed);
	h->token_file = dup_member(http, "token_file", failed);
	h->allowed_origins =
	    dup_list(http, "allowed_origins", &h->n_allowed_origins, failed);
	h->allowed_hosts =
	    dup_list(http, "allowed_hosts", &h->n_allowed_hosts, failed);
	h->session_idle_s = (unsigned)json_integer_value(
	    json_object_get(http, "session_idle_s"));
	h->idle_timeout_s = (unsigned)json_integer_value(
	    json_object_get(http, "idle_timeout_s"));
	h->header_timeout_s = (unsigned)json_integer_value(
	    json_object_get(http, "header_timeout_s"));
	h->body_timeout_s = (unsigned)json_integer_value(
	    json_object_get(http, "body_timeout_s"));
	h->max_unauthenticated = (unsigned)json_integer_value(
	    json_object_get(http, "max_unauthenticated"));
	h->max_connections = (unsigned)json_integer_value(
	    json_object_get(http, "max_connections"));
	h->max_inflight =
	    (unsigned)json_integer_value(json_object_get(http, "max_inflight"));
	h->answer_budget_mib = (unsigned)json_integer_value(
	    json_object_get(http, "answer_budget_mib"));
	h->tls_cert = dup_member(tls, "cert", failed);
	h->tls_key = dup_member(tls, "key", failed);
	h->public_url = dup_member(http, "public_url", failed);
	h->oauth = tb_config_take_oauth(json_object_get(http, "oauth"), failed);
	return h;
}

void tb_config_free_http(struct tb_config_http *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_allowed_origins; i++)
		free(h->allowed_origins[i]);
	for (size_t i = 0; i < h->n_allowed_hosts; i++)
		free(h->allowed_hosts[i]);
	free(h->allowed_origins);
	free(h->allowed_hosts);
	free(h->listen);
	free(h->path);
	free(h->token_env);
	free(h->token_file);
	free(h->tls_cert);
	free(h->tls_key);
	free(h->public_url);
	tb_config_free_oauth(h->oauth);
	free(h);
}
