/* The e2b provider: sandboxes in E2B's cloud (or a deployment of the same
 * API). This file holds the descriptor, the settings and the op table; the
 * control plane is in api.c, envd in envd_*.c.
 *
 * Settings (all optional; any other key is refused):
 *   api_key_env       name of the environment variable holding the API key
 *                     (default E2B_API_KEY); the key never sits in config
 *   domain            the E2B domain (default e2b.app)
 *   api_url           control-plane URL (default https://api.DOMAIN)
 *   sandbox_url       envd URL for every sandbox (default
 *                     https://49983-SANDBOXID.DOMAIN)
 *   template          template of new sandboxes (default base)
 *   env               object of NAME: value that every process in every
 *                     new sandbox sees (the API's envVars)
 *   default_lifetime  seconds a sandbox lives when create names none, and
 *                     the life connect extends a sandbox to (default 3600)
 *   request_timeout   seconds any one API or file request may take
 *                     (default 60)
 *   connection_reuse  seconds what connect learnt about a sandbox is used
 *                     again without asking the API (default 10, 0..300;
 *                     0: every connect asks) */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "e2b_int.h"

#define DEFAULT_DOMAIN "e2b.app"
#define DEFAULT_TEMPLATE "base"
#define DEFAULT_LIFETIME_S 3600u
#define MAX_LIFETIME_S 86400u
#define DEFAULT_REQUEST_TIMEOUT_S 60u
#define MAX_REQUEST_TIMEOUT_S 600u
#define DEFAULT_CONNECTION_REUSE_S 10u
#define MAX_CONNECTION_REUSE_S 300u

static int valid_env_name(const char *s)
{
	size_t i;

	if (!s[0] || isdigit((unsigned char)s[0]))
		return 0;
	for (i = 0; s[i]; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return i <= 128;
}

static int valid_url(const char *s)
{
	size_t i;

	if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
		return 0;
	if (strlen(s) > 512)
		return 0;
	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return 0;
	s = strstr(s, "://") + 3;
	return *s && *s != '/';
}

static int valid_domain(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '.')
			return 0;
	return i > 0 && i <= 253 && s[0] != '.' && s[0] != '-';
}

static int valid_template(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_./:", s[i]))
			return 0;
	return i > 0 && i <= 128;
}

static void instance_free(struct tb_e2b *inst)
{
	if (!inst)
		return;
	if (inst->api_key) {
		/* Wipe the key before giving the memory back. */
		volatile char *p = inst->api_key;
		while (*p)
			*p++ = '\0';
	}
	free(inst->api_key);
	free(inst->api_key_env);
	free(inst->api_url);
	free(inst->sandbox_url);
	free(inst->domain);
	free(inst->template_name);
	free(inst->env_json);
	tb_conn_cache_free(inst->cache);
	tb_http_pool_free(inst->pool);
	free(inst);
}

/* A string setting through its rule; *out keeps a copy without a trailing
 * '/' for URLs. */
static int take_string(json_t *v, const char *key, int (*rule)(const char *),
                       const char *rule_text, char **out, char *errbuf,
                       size_t errlen)
{
	const char *s = json_string_value(v);
	size_t n;

	if (!json_is_string(v) || !rule(s))
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID, "settings.%s: must be %s",
		                   key, rule_text);
	free(*out);
	*out = strdup(s);
	if (!*out)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "out of memory");
	n = strlen(*out);
	if (rule == valid_url && (*out)[n - 1] == '/')
		(*out)[n - 1] = '\0';
	return TASKBOX_OK;
}

static int take_seconds(json_t *v, const char *key, uint32_t max, uint32_t *out,
                        char *errbuf, size_t errlen)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > (json_int_t)max)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "settings.%s: must be an integer of seconds "
		                   "from 1 to %u",
		                   key, (unsigned)max);
	*out = (uint32_t)json_integer_value(v);
	return TASKBOX_OK;
}

/* settings.connection_reuse: 0 (off) or seconds up to the maximum. */
static int take_reuse(json_t *v, uint32_t *out, char *errbuf, size_t errlen)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (json_int_t)MAX_CONNECTION_REUSE_S)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "settings.connection_reuse: must be an "
		                   "integer of seconds from 0 (off) to %u",
		                   MAX_CONNECTION_REUSE_S);
	*out = (uint32_t)json_integer_value(v);
	return TASKBOX_OK;
}

/* settings.env: an object of environment variables, kept as JSON text. */
static int take_env(struct tb_e2b *inst, json_t *v, char *errbuf, size_t errlen)
{
	const char *name;
	json_t *val;

	if (!json_is_object(v))
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "settings.env: must be an object of "
		                   "NAME: \"value\"");
	json_object_foreach(v, name, val)
	{
		if (!valid_env_name(name) || !json_is_string(val))
			return tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                   TASKBOX_E_INVALID,
			                   "settings.env.%.64s: must be a "
			                   "variable name with a string value",
			                   name);
	}
	free(inst->env_json);
	inst->env_json = json_dumps(v, JSON_COMPACT);
	if (!inst->env_json)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "out of memory");
	return TASKBOX_OK;
}

static int apply_settings(struct tb_e2b *inst, json_t *root, char *errbuf,
                          size_t errlen)
{
	const char *key;
	json_t *v;
	int rc = TASKBOX_OK;

	json_object_foreach(root, key, v)
	{
		if (strcmp(key, "api_key_env") == 0)
			rc = take_string(v, key, valid_env_name,
			                 "the name of an environment variable",
			                 &inst->api_key_env, errbuf, errlen);
		else if (strcmp(key, "api_url") == 0)
			rc = take_string(v, key, valid_url,
			                 "an http:// or https:// URL",
			                 &inst->api_url, errbuf, errlen);
		else if (strcmp(key, "sandbox_url") == 0)
			rc = take_string(v, key, valid_url,
			                 "an http:// or https:// URL",
			                 &inst->sandbox_url, errbuf, errlen);
		else if (strcmp(key, "domain") == 0)
			rc = take_string(v, key, valid_domain, "a DNS domain",
			                 &inst->domain, errbuf, errlen);
		else if (strcmp(key, "template") == 0)
			rc = take_string(v, key, valid_template,
			                 "1..128 bytes of [A-Za-z0-9-_./:]",
			                 &inst->template_name, errbuf, errlen);
		else if (strcmp(key, "env") == 0)
			rc = take_env(inst, v, errbuf, errlen);
		else if (strcmp(key, "default_lifetime") == 0)
			rc = take_seconds(v, key, MAX_LIFETIME_S,
			                  &inst->default_lifetime_s, errbuf,
			                  errlen);
		else if (strcmp(key, "request_timeout") == 0)
			rc = take_seconds(v, key, MAX_REQUEST_TIMEOUT_S,
			                  &inst->request_timeout_s, errbuf,
			                  errlen);
		else if (strcmp(key, "connection_reuse") == 0)
			rc = take_reuse(v, &inst->connection_reuse_s, errbuf,
			                errlen);
		else
			rc = tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                 TASKBOX_E_INVALID,
			                 "settings.%s: unknown setting (known: "
			                 "api_key_env, api_url, sandbox_url, "
			                 "domain, template, env, "
			                 "default_lifetime, request_timeout, "
			                 "connection_reuse)",
			                 key);
		if (rc != TASKBOX_OK)
			return rc;
	}
	return TASKBOX_OK;
}

static int e2b_init(const struct taskbox_host *host, const char *settings_json,
                    void **instance, char *errbuf, size_t errlen)
{
	struct tb_e2b *inst;
	json_error_t jerr;
	json_t *root;
	const char *key;
	int rc;

	*instance = NULL;
	root = json_loads(settings_json ? settings_json : "{}", 0, &jerr);
	if (!json_is_object(root)) {
		json_decref(root);
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "settings: must be a JSON object");
	}
	inst = calloc(1, sizeof *inst);
	if (!inst) {
		json_decref(root);
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "out of memory");
	}
	inst->host = host;
	inst->default_lifetime_s = DEFAULT_LIFETIME_S;
	inst->request_timeout_s = DEFAULT_REQUEST_TIMEOUT_S;
	inst->connection_reuse_s = DEFAULT_CONNECTION_REUSE_S;
	rc = apply_settings(inst, root, errbuf, errlen);
	json_decref(root);
	if (rc != TASKBOX_OK)
		goto fail;
	if ((!inst->api_key_env &&
	     !(inst->api_key_env = strdup("E2B_API_KEY"))) ||
	    (!inst->domain && !(inst->domain = strdup(DEFAULT_DOMAIN))) ||
	    (!inst->template_name &&
	     !(inst->template_name = strdup(DEFAULT_TEMPLATE))))
		goto nomem;
	if (!inst->api_url) {
		size_t n = strlen(inst->domain) + 16;
		if (!(inst->api_url = malloc(n)))
			goto nomem;
		snprintf(inst->api_url, n, "https://api.%s", inst->domain);
	}
	if (!(inst->pool = tb_http_pool_new()) ||
	    !(inst->cache = tb_conn_cache_new(inst->connection_reuse_s)))
		goto nomem;
	key = getenv(inst->api_key_env);
	if (key && *key && !(inst->api_key = strdup(key)))
		goto nomem;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_INTERNAL,
		                 "libcurl failed to start");
		goto fail;
	}
	*instance = inst;
	return TASKBOX_OK;
nomem:
	rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
	                 "out of memory");
fail:
	instance_free(inst);
	return rc;
}

static void e2b_fini(void *instance)
{
	instance_free(instance);
	curl_global_cleanup();
}

static int e2b_create(void *instance, const struct taskbox_create_req *req,
                      char *id, char *errbuf, size_t errlen)
{
	struct tb_e2b *inst = instance;
	const char *tmpl = inst->template_name;
	uint32_t life = inst->default_lifetime_s;
	const char *owner = NULL;

	if (req &&
	    req->struct_size >=
	        offsetof(struct taskbox_create_req, template_name) +
	            sizeof req->template_name &&
	    req->template_name) {
		if (!valid_template(req->template_name))
			return tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                   TASKBOX_E_INVALID,
			                   "create: template must be 1..128 "
			                   "bytes of [A-Za-z0-9-_./:]");
		tmpl = req->template_name;
	}
	if (req &&
	    req->struct_size >=
	        offsetof(struct taskbox_create_req, lifetime_s) +
	            sizeof req->lifetime_s &&
	    req->lifetime_s) {
		if (req->lifetime_s > MAX_LIFETIME_S)
			return tb_e2b_fail(
			    errbuf, errlen, NULL, NULL, TASKBOX_E_INVALID,
			    "create: lifetime must be at most %u s",
			    MAX_LIFETIME_S);
		life = req->lifetime_s;
	}
	if (req &&
	    req->struct_size >= offsetof(struct taskbox_create_req, owner) +
	                            sizeof req->owner &&
	    req->owner && req->owner[0]) {
		if (!tb_e2b_valid_owner(req->owner))
			return tb_e2b_fail(
			    errbuf, errlen, NULL, NULL, TASKBOX_E_INVALID,
			    "create: owner must be 1..%d bytes of UTF-8 "
			    "without control characters",
			    TASKBOX_OWNER_MAX - 1);
		owner = req->owner;
	}
	id[0] = '\0';
	return tb_e2b_api_create(inst, tmpl, life, owner, id, errbuf, errlen);
}

static void conn_free(struct tb_e2b_conn *conn)
{
	if (!conn)
		return;
	free(conn->envd_url);
	free(conn->access_token);
	free(conn);
}

static int e2b_connect(void *instance, const char *sandbox_id, void **conn,
                       char *errbuf, size_t errlen)
{
	struct tb_e2b_conn *c = calloc(1, sizeof *c);
	int rc;

	*conn = NULL;
	if (!c)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "out of memory");
	c->inst = instance;
	rc = tb_e2b_conn_open(instance, sandbox_id, c, errbuf, errlen);
	if (rc != TASKBOX_OK) {
		conn_free(c);
		return rc;
	}
	*conn = c;
	return TASKBOX_OK;
}

static void e2b_close(void *conn)
{
	conn_free(conn);
}

/* The envd ops below run once more, through a fresh connect, when envd
 * says the connection is stale (tb_e2b_retry_stale). */

static void exec_result_reset(const struct taskbox_host *host,
                              struct taskbox_exec_result *res)
{
	size_t size = res->struct_size;

	host->free(res->out.data);
	host->free(res->err.data);
	memset(res, 0, size < sizeof *res ? size : sizeof *res);
	res->struct_size = size;
}

static int e2b_exec(void *conn, const struct taskbox_exec_req *req,
                    struct taskbox_exec_result *res, char *errbuf,
                    size_t errlen)
{
	struct tb_e2b_conn *c = conn;
	int rc, tries = 0;

	if (!req || req->struct_size <
	                offsetof(struct taskbox_exec_req, cancelled_arg) +
	                    sizeof req->cancelled_arg)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "exec: request struct is too short");
	for (;;) {
		rc = tb_envd_exec(c, req, res, errbuf, errlen);
		if (!tb_e2b_retry_stale(c, &rc, &tries, errbuf, errlen))
			return rc;
		exec_result_reset(c->inst->host, res);
	}
}

static int e2b_read_file(void *conn, const char *path, uint64_t offset,
                         size_t length, struct taskbox_buf *data,
                         uint64_t *file_size, char *errbuf, size_t errlen)
{
	struct tb_e2b_conn *c = conn;
	int rc, tries = 0;

	do
		rc = tb_envd_read_file(c, path, offset, length, data, file_size,
		                       errbuf, errlen);
	while (tb_e2b_retry_stale(c, &rc, &tries, errbuf, errlen));
	return rc;
}

static void read_items_reset(const struct taskbox_host *host,
                             struct taskbox_read_item *const *items,
                             size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (!items[i])
			continue;
		host->free(items[i]->data.data);
		items[i]->data.data = NULL;
		items[i]->data.len = 0;
	}
}

static int e2b_read_files(void *conn, struct taskbox_read_item *const *items,
                          size_t count, char *errbuf, size_t errlen)
{
	struct tb_e2b_conn *c = conn;
	int rc, tries = 0;

	for (;;) {
		rc = tb_envd_read_files(c, items, count, errbuf, errlen);
		if (!tb_e2b_retry_stale(c, &rc, &tries, errbuf, errlen))
			return rc;
		read_items_reset(c->inst->host, items, count);
	}
}

static int e2b_destroy(void *instance, const char *sandbox_id, char *errbuf,
                       size_t errlen)
{
	struct tb_e2b *inst = instance;
	int rc;

	tb_conn_cache_drop(inst->cache, sandbox_id);
	rc = tb_e2b_api_destroy(inst, sandbox_id, errbuf, errlen);
	/* Also what a connect running alongside may have put back. */
	tb_conn_cache_drop(inst->cache, sandbox_id);
	return rc;
}

static int e2b_write_file(void *conn, const char *path,
                          const unsigned char *data, size_t len, uint32_t mode,
                          char *errbuf, size_t errlen)
{
	struct tb_e2b_conn *c = conn;
	int rc, tries = 0;

	do
		rc = tb_envd_write_file(c, path, data, len, mode, errbuf,
		                        errlen);
	while (tb_e2b_retry_stale(c, &rc, &tries, errbuf, errlen));
	return rc;
}

/* The API sets the sandbox to end lifetime_s from now: so does describe. */
static int e2b_renew(void *conn, uint32_t lifetime_s, char *errbuf,
                     size_t errlen)
{
	struct tb_e2b_conn *c = conn;
	int rc;

	if (lifetime_s == 0 || lifetime_s > MAX_LIFETIME_S)
		return tb_e2b_fail(
		    errbuf, errlen, NULL, NULL, TASKBOX_E_INVALID,
		    "renew: lifetime must be 1..%u s", MAX_LIFETIME_S);
	rc = tb_e2b_api_renew(c->inst, c->id, lifetime_s, errbuf, errlen);
	if (rc == TASKBOX_OK && c->info.known) {
		c->info.expires_s = (int64_t)time(NULL) + lifetime_s;
		tb_conn_cache_set_info(c->inst->cache, c->id, &c->info);
	} else if (rc != TASKBOX_OK) {
		/* The outcome may be unknown: ask again next time. */
		c->info.known = 0;
	}
	return rc;
}

/* From what connect (or an earlier describe within connection_reuse
 * seconds) learnt, else one GET /sandboxes/{id}. */
static int e2b_describe(void *conn, struct taskbox_sandbox_info *info,
                        char *errbuf, size_t errlen)
{
	struct tb_e2b_conn *c = conn;
	int rc;

	if (!info || info->struct_size < sizeof info->struct_size)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "describe: info struct is too short");
	if (!c->info.known) {
		rc = tb_e2b_api_info(c->inst, c->id, &c->info, errbuf, errlen);
		if (rc != TASKBOX_OK)
			return rc;
		tb_conn_cache_set_info(c->inst->cache, c->id, &c->info);
	}
	tb_e2b_info_out(c->id, &c->info, info);
	return TASKBOX_OK;
}

static int e2b_list(void *instance, const char *owner, taskbox_list_fn each,
                    void *arg, char *errbuf, size_t errlen)
{
	return tb_e2b_list(instance, owner, each, arg, errbuf, errlen);
}

static const struct taskbox_provider e2b_provider = {
    .abi_major = TASKBOX_ABI_MAJOR,
    .abi_minor = TASKBOX_ABI_MINOR,
    .struct_size = sizeof(struct taskbox_provider),
    .name = TB_E2B_NAME,
    .version = PACKAGE_VERSION,
    .description = "sandboxes in E2B's cloud over its REST API and envd",
    .ops =
        {
            .init = e2b_init,
            .fini = e2b_fini,
            .create = e2b_create,
            .connect = e2b_connect,
            .close = e2b_close,
            .exec = e2b_exec,
            .read_file = e2b_read_file,
            .destroy = e2b_destroy,
            .write_file = e2b_write_file,
            .renew = e2b_renew,
        },
    .read_files = e2b_read_files,
    .describe = e2b_describe,
    .list = e2b_list,
};

TASKBOX_PROVIDER_DEFINE(e2b_provider)
