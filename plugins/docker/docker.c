/* docker provider: the descriptor and the instance's settings. Sandboxes are
 * containers on a Docker Engine API endpoint (Docker or podman). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/settings.h"
#include "docker.h"

#define DEFAULT_HOST "unix:///var/run/docker.sock"
#define DEFAULT_LIFETIME_S 3600
#define MAX_LIFETIME_S (366u * 24 * 3600)
#define DEFAULT_REUSE_S 10
#define MAX_REUSE_S 300

static const char *const known_keys[] = {
    "host",
    "image",
    "templates",
    "network",
    "tls",
    "memory",
    "cpus",
    "pids_limit",
    "user",
    "workdir",
    "default_lifetime",
    "env",
    "init",
    "connection_reuse",
    NULL,
};

static void dk_free(struct tb_dk *dk)
{
	if (!dk)
		return;
	free(dk->host_url);
	free(dk->sock_path);
	free(dk->base_url);
	free(dk->tls_dir);
	free(dk->image);
	json_decref(dk->templates);
	json_decref(dk->env);
	free(dk->network);
	free(dk->user);
	free(dk->workdir);
	tb_dk_cache_free(&dk->known);
	tb_dk_pool_free(&dk->pool);
	pthread_mutex_destroy(&dk->lock);
	free(dk);
}

static int bad(char *errbuf, size_t errlen, const char *key, const char *rule)
{
	return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
	                  "docker settings: %s %s", key, rule);
}

/* A string setting: *out gets a copy, or stays NULL when absent. */
static int get_string(json_t *s, const char *key, char **out, char *errbuf,
                      size_t errlen)
{
	json_t *v = json_object_get(s, key);

	if (!v)
		return TASKBOX_OK;
	if (!json_is_string(v) || !json_string_length(v))
		return bad(errbuf, errlen, key, "must be a non-empty string");
	*out = strdup(json_string_value(v));
	return *out ? TASKBOX_OK
	            : tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
}

static int get_positive(json_t *s, const char *key, int64_t max, int64_t *out,
                        char *errbuf, size_t errlen)
{
	json_t *v = json_object_get(s, key);

	if (!v)
		return TASKBOX_OK;
	if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
	    json_integer_value(v) > max)
		return bad(errbuf, errlen, key,
		           "must be a positive integer in range");
	*out = json_integer_value(v);
	return TASKBOX_OK;
}

/* connection_reuse: seconds (0..MAX_REUSE_S) what connect checked is
 * trusted; absent: DEFAULT_REUSE_S. */
static int get_reuse(json_t *s, uint32_t *out, char *errbuf, size_t errlen)
{
	json_t *v = json_object_get(s, "connection_reuse");

	*out = DEFAULT_REUSE_S;
	if (!v)
		return TASKBOX_OK;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > MAX_REUSE_S)
		return bad(errbuf, errlen, "connection_reuse",
		           "must be an integer from 0 to 300 (seconds; 0 "
		           "turns it off)");
	*out = (uint32_t)json_integer_value(v);
	return TASKBOX_OK;
}

/* env: an object of NAME -> string value, kept as "NAME=value" entries. */
/* Appends a "NAME=value" entry to the array ctx. */
static int env_add(void *ctx, char *entry)
{
	json_t *s = json_string(entry);

	free(entry);
	return s && json_array_append_new(ctx, s) == 0 ? TASKBOX_OK
	                                               : TASKBOX_E_NOMEM;
}

static int parse_env(struct tb_dk *dk, json_t *v, char *errbuf, size_t errlen)
{
	char why[256] = "";
	int code;

	if (!v)
		return TASKBOX_OK;
	dk->env = json_array();
	if (!dk->env)
		return TASKBOX_E_NOMEM;
	code = tb_settings_env(v, NULL, env_add, dk->env, why, sizeof(why));
	if (code == TASKBOX_E_INVALID)
		tb_dk_fail(code, errbuf, errlen, "docker settings: %s", why);
	return code;
}

/* Splits host into a socket path or a tcp base URL. */
static int parse_host(struct tb_dk *dk, const char *host, char *errbuf,
                      size_t errlen)
{
	const char *tlsv = getenv("DOCKER_TLS_VERIFY");
	const char *cert = getenv("DOCKER_CERT_PATH");
	char buf[4096];

	dk->host_url = strdup(host);
	if (!dk->host_url)
		return TASKBOX_E_NOMEM;
	if (!strncmp(host, "unix://", 7)) {
		if (host[7] != '/')
			return bad(errbuf, errlen, "host",
			           "must be unix:///ABSOLUTE/PATH");
		dk->sock_path = strdup(host + 7);
		dk->base_url = strdup("http://localhost");
		return dk->sock_path && dk->base_url ? TASKBOX_OK
		                                     : TASKBOX_E_NOMEM;
	}
	if (strncmp(host, "tcp://", 6) || !strchr(host + 6, ':') ||
	    strchr(host + 6, '/'))
		return bad(errbuf, errlen, "host",
		           "must be unix://PATH or tcp://HOST:PORT");
	/* TLS: the tls setting, else the DOCKER_TLS_VERIFY convention with
	 * DOCKER_CERT_PATH (default ~/.docker). */
	if (!dk->tls_dir && tlsv && *tlsv && strcmp(tlsv, "0")) {
		if (cert && *cert)
			snprintf(buf, sizeof(buf), "%s", cert);
		else
			snprintf(buf, sizeof(buf), "%s/.docker",
			         getenv("HOME") ? getenv("HOME") : "");
		dk->tls_dir = strdup(buf);
		if (!dk->tls_dir)
			return TASKBOX_E_NOMEM;
	}
	dk->tls_verify = dk->tls_dir != NULL;
	snprintf(buf, sizeof(buf), "%s://%s", dk->tls_dir ? "https" : "http",
	         host + 6);
	dk->base_url = strdup(buf);
	return dk->base_url ? TASKBOX_OK : TASKBOX_E_NOMEM;
}

static int parse_settings(struct tb_dk *dk, json_t *s, char *errbuf,
                          size_t errlen)
{
	const char *key, *host;
	json_t *v;
	char *host_set = NULL;
	int64_t lifetime = DEFAULT_LIFETIME_S;
	int code;

	json_object_foreach(s, key, v)
	{
		int known = 0;
		for (int i = 0; known_keys[i]; i++)
			known |= !strcmp(key, known_keys[i]);
		if (!known)
			return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
			                  "docker settings: unknown setting "
			                  "\"%.100s\"",
			                  key);
	}
	if ((code = get_string(s, "image", &dk->image, errbuf, errlen)) ||
	    (code = get_string(s, "network", &dk->network, errbuf, errlen)) ||
	    (code = get_string(s, "tls", &dk->tls_dir, errbuf, errlen)) ||
	    (code = get_string(s, "user", &dk->user, errbuf, errlen)) ||
	    (code = get_string(s, "workdir", &dk->workdir, errbuf, errlen)) ||
	    (code = get_string(s, "host", &host_set, errbuf, errlen)))
		goto out;
	if (!dk->image) {
		code = bad(errbuf, errlen, "image",
		           "is required (the image sandboxes are made from)");
		goto out;
	}
	if (dk->workdir && dk->workdir[0] != '/') {
		code =
		    bad(errbuf, errlen, "workdir", "must be an absolute path");
		goto out;
	}
	if (!dk->network && !(dk->network = strdup("none"))) {
		code = TASKBOX_E_NOMEM;
		goto out;
	}
	v = json_object_get(s, "templates");
	if (v) {
		const char *tk;
		json_t *tv;
		if (!json_is_object(v)) {
			code = bad(errbuf, errlen, "templates",
			           "must be an object of name -> image");
			goto out;
		}
		json_object_foreach(v, tk, tv)
		{
			if (!json_is_string(tv) || !json_string_length(tv)) {
				code =
				    bad(errbuf, errlen, "templates",
				        "values must be non-empty image names");
				goto out;
			}
		}
		dk->templates = json_incref(v);
	}
	if ((code = parse_env(dk, json_object_get(s, "env"), errbuf, errlen)))
		goto out;
	if ((code = get_positive(s, "memory", INT64_MAX, &dk->memory, errbuf,
	                         errlen)) ||
	    (code = get_positive(s, "pids_limit", INT64_MAX, &dk->pids_limit,
	                         errbuf, errlen)) ||
	    (code = get_positive(s, "default_lifetime", MAX_LIFETIME_S,
	                         &lifetime, errbuf, errlen)))
		goto out;
	dk->default_lifetime = (uint32_t)lifetime;
	if ((code = get_reuse(s, &dk->reuse_s, errbuf, errlen)))
		goto out;
	if (tb_dk_parse_init(json_object_get(s, "init"), &dk->init)) {
		code = bad(errbuf, errlen, "init",
		           "must be true, false or \"auto\"");
		goto out;
	}
	v = json_object_get(s, "cpus");
	if (v) {
		double c = json_number_value(v);
		if (!json_is_number(v) || !(c > 0) || c > 4096 || isnan(c)) {
			code = bad(errbuf, errlen, "cpus",
			           "must be a positive number");
			goto out;
		}
		dk->nano_cpus = (int64_t)llround(c * 1e9);
	}
	host = host_set ? host_set : getenv("DOCKER_HOST");
	if (!host || !*host)
		host = DEFAULT_HOST;
	code = parse_host(dk, host, errbuf, errlen);
out:
	free(host_set);
	if (code == TASKBOX_E_NOMEM)
		tb_dk_fail(code, errbuf, errlen, "docker settings: no memory");
	return code;
}

static int dk_init(const struct taskbox_host *host, const char *settings_json,
                   void **instance, char *errbuf, size_t errlen)
{
	struct tb_dk *dk;
	json_error_t jerr;
	json_t *s;
	int code;

	s = json_loads(settings_json ? settings_json : "{}", 0, &jerr);
	if (!json_is_object(s)) {
		json_decref(s);
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "docker settings: must be a JSON object");
	}
	dk = calloc(1, sizeof(*dk));
	if (!dk) {
		json_decref(s);
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	}
	pthread_mutex_init(&dk->lock, NULL);
	tb_dk_pool_init(&dk->pool);
	tb_dk_cache_init(&dk->known);
	dk->host = host;
	code = parse_settings(dk, s, errbuf, errlen);
	json_decref(s);
	if (code != TASKBOX_OK) {
		dk_free(dk);
		return code;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		dk_free(dk);
		return tb_dk_fail(TASKBOX_E_INTERNAL, errbuf, errlen,
		                  "curl_global_init failed");
	}
	/* Expired sandboxes go now; an engine that is down is not an error
	 * at init (ops report it when they need the engine). */
	tb_dk_sweep(dk);
	*instance = dk;
	return TASKBOX_OK;
}

static void dk_fini(void *instance)
{
	dk_free(instance);
	curl_global_cleanup();
}

static const struct taskbox_provider descriptor = {
    .abi_major = TASKBOX_ABI_MAJOR,
    .abi_minor = TASKBOX_ABI_MINOR,
    .struct_size = sizeof(struct taskbox_provider),
    .name = TB_DK_NAME,
    .version = PACKAGE_VERSION,
    .description = "containers on a Docker Engine API endpoint (Docker or "
                   "podman)",
    .ops =
        {
            .init = dk_init,
            .fini = dk_fini,
            .create = tb_dk_create,
            .connect = tb_dk_connect,
            .close = tb_dk_close,
            .exec = tb_dk_exec,
            .read_file = tb_dk_read_file,
            .destroy = tb_dk_destroy,
            .write_file = tb_dk_write_file,
            .renew = tb_dk_renew,
        },
    .read_files = tb_dk_read_files,
    .describe = tb_dk_describe,
    .list = tb_dk_list,
};

TASKBOX_PROVIDER_DEFINE(descriptor)
