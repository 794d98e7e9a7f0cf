/* The operator's config file: lookup, parsing and validation. Every bad
 * field is reported as "JSON.PATH: rule", one per line. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/config_file.h"
#include "host/config_http.h"
#include "host/config_limits.h"

#define BUILTIN_SOURCE "(built-in default)"
#define BUILTIN_TEXT                                                           \
	"{\"default\": \"local\", \"providers\": {\"local\": "                 \
	"{\"plugin\": \"local\", \"settings\": {}}}}"

#define INSTANCE_RULE "^[a-z][a-z0-9_-]{0,31}$"
#define PLUGIN_RULE "^[a-z][a-z0-9_]{0,31}$"
#define ENV_RULE "^[A-Za-z_][A-Za-z0-9_]*$"

void tb_config_problem(struct tb_config_problems *p, const char *path,
                       const char *fmt, ...)
{
	va_list ap;
	int n;

	p->count++;
	if (!p->buf || p->used + 1 >= p->len)
		return;
	n = snprintf(p->buf + p->used, p->len - p->used,
	             "%s%s: ", p->used ? "\n" : "", path);
	if (n < 0 || (size_t)n >= p->len - p->used) {
		p->used = p->len - 1;
		return;
	}
	p->used += (size_t)n;
	va_start(ap, fmt);
	n = vsnprintf(p->buf + p->used, p->len - p->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= p->len - p->used)
		p->used = p->len - 1;
	else
		p->used += (size_t)n;
}

/* True when s is 1..max characters, each a lowercase letter (or also an
 * uppercase letter or '_' when upper), or after the first a digit or one of
 * rest. */
static int name_matches(const char *s, size_t max, const char *rest, int upper)
{
	size_t n;

	if (!s)
		return 0;
	for (n = 0; s[n]; n++) {
		char c = s[n];
		int ok = (c >= 'a' && c <= 'z') ||
		         (upper && ((c >= 'A' && c <= 'Z') || c == '_'));
		if (n > 0)
			ok = ok || (c >= '0' && c <= '9') ||
			     (c && strchr(rest, c) != NULL);
		if (!ok)
			return 0;
	}
	return n >= 1 && n <= max;
}

static int instance_name_ok(const char *s)
{
	return name_matches(s, 32, "_-", 0);
}

static int plugin_name_ok(const char *s)
{
	return name_matches(s, 32, "_", 0);
}

bool tb_config_env_name_ok(const char *s)
{
	return name_matches(s, (size_t)-1, "_", 1);
}

/* The JSON path of key under parent: parent.key when key is a plain
 * identifier, else parent["key"] with the key JSON-escaped. */
static char *child_path(const char *parent, const char *key)
{
	char *out = NULL, *quoted;
	json_t *s;
	int plain = key[0] != '\0';

	for (const char *c = key; *c && plain; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		        (*c >= '0' && *c <= '9') || *c == '_' || *c == '-';
	if (plain)
		return asprintf(&out, "%s.%s", parent, key) < 0 ? NULL : out;
	s = json_string(key);
	quoted = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	json_decref(s);
	if (quoted && asprintf(&out, "%s[%s]", parent, quoted) < 0)
		out = NULL;
	free(quoted);
	return out;
}

const char *tb_config_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/* True for a comment's value: a string or an array of strings. */
static bool comment_text(json_t *v)
{
	size_t i;
	json_t *line;

	if (json_is_string(v))
		return true;
	if (!json_is_array(v))
		return false;
	json_array_foreach(v, i, line)
	{
		if (!json_is_string(line))
			return false;
	}
	return true;
}

/* Reports every key of obj not in allowed (a NULL-terminated list). A key
 * starting with "//" is a comment (JSON has none), skipped when its value
 * is text. */
void tb_config_unknown_keys(struct tb_config_problems *p, const char *path,
                            json_t *obj, const char *const *allowed,
                            const char *listed)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		bool comment = strncmp(key, "//", 2) == 0;
		int known = comment && comment_text(v);
		for (const char *const *a = allowed; *a; a++)
			known = known || strcmp(*a, key) == 0;
		if (!known) {
			char *kp = child_path(path, key);
			if (comment)
				tb_config_problem(
				    p, kp ? kp : path,
				    "a comment (a key starting with "
				    "//) must be a string or an "
				    "array of strings");
			else
				tb_config_problem(p, kp ? kp : path,
				                  "unknown key (allowed: %s)",
				                  listed);
			free(kp);
		}
	}
}

/* An instance's "watches" (absent, or an integer in range). */
static void check_watches(struct tb_config_problems *p, const char *path,
                          json_t *watches)
{
	char *sub;

	if (!watches ||
	    (json_is_integer(watches) && json_integer_value(watches) >= 0 &&
	     json_integer_value(watches) <= TB_CONFIG_WATCHES_MAX))
		return;
	sub = child_path(path, "watches");
	tb_config_problem(p, sub ? sub : path,
	                  "must be an integer 0..%d (waits watched at once; 0 "
	                  "watches none)",
	                  TB_CONFIG_WATCHES_MAX);
	free(sub);
}

/* The mode an instance's "supervisor" names, or -1. */
static int sup_mode(const char *s)
{
	if (strcmp(s, "auto") == 0)
		return TB_SUP_MODE_AUTO;
	if (strcmp(s, "static") == 0)
		return TB_SUP_MODE_STATIC;
	if (strcmp(s, "python3") == 0)
		return TB_SUP_MODE_PYTHON3;
	return -1;
}

static void check_instance(struct tb_config_problems *p, const char *path,
                           json_t *inst)
{
	static const char *const allowed[] = {"plugin", "settings",
	                                      "supervisor", "watches", NULL};
	char *sub;
	json_t *plugin, *settings, *supervisor;

	if (!json_is_object(inst)) {
		tb_config_problem(p, path, "must be an object, not %s",
		                  tb_config_type_name(inst));
		return;
	}
	tb_config_unknown_keys(p, path, inst, allowed,
	                       "plugin, settings, supervisor, watches");
	plugin = json_object_get(inst, "plugin");
	sub = child_path(path, "plugin");
	if (!plugin)
		tb_config_problem(p, sub, "required");
	else if (!json_is_string(plugin))
		tb_config_problem(p, sub, "must be a string, not %s",
		                  tb_config_type_name(plugin));
	else if (!plugin_name_ok(json_string_value(plugin)))
		tb_config_problem(p, sub, "must match %s", PLUGIN_RULE);
	free(sub);
	settings = json_object_get(inst, "settings");
	sub = child_path(path, "settings");
	if (settings && !json_is_object(settings))
		tb_config_problem(p, sub, "must be an object, not %s",
		                  tb_config_type_name(settings));
	free(sub);
	supervisor = json_object_get(inst, "supervisor");
	sub = child_path(path, "supervisor");
	if (supervisor && !json_is_string(supervisor))
		tb_config_problem(p, sub, "must be a string, not %s",
		                  tb_config_type_name(supervisor));
	else if (supervisor && sup_mode(json_string_value(supervisor)) < 0)
		tb_config_problem(
		    p, sub, "must be \"auto\", \"static\" or \"python3\"");
	free(sub);
	check_watches(p, path, json_object_get(inst, "watches"));
}

static void check_providers(struct tb_config_problems *p, json_t *providers)
{
	const char *name;
	json_t *inst;

	if (!providers) {
		tb_config_problem(p, "$.providers", "required");
		return;
	}
	if (!json_is_object(providers)) {
		tb_config_problem(p, "$.providers", "must be an object, not %s",
		                  tb_config_type_name(providers));
		return;
	}
	if (json_object_size(providers) == 0)
		tb_config_problem(p, "$.providers",
		                  "must name at least one instance");
	json_object_foreach(providers, name, inst)
	{
		char *path = child_path("$.providers", name);
		if (!path)
			continue;
		if (!instance_name_ok(name))
			tb_config_problem(p, path,
			                  "instance name must match %s",
			                  INSTANCE_RULE);
		check_instance(p, path, inst);
		free(path);
	}
}

static void check_default(struct tb_config_problems *p, json_t *def,
                          json_t *providers)
{
	if (!def)
		tb_config_problem(p, "$.default", "required");
	else if (!json_is_string(def))
		tb_config_problem(p, "$.default", "must be a string, not %s",
		                  tb_config_type_name(def));
	else if (json_is_object(providers) &&
	         !json_object_get(providers, json_string_value(def)))
		tb_config_problem(
		    p, "$.default",
		    "must name an instance under $.providers (\"%.64s\" "
		    "is not one)",
		    json_string_value(def));
}

static void check_mask(struct tb_config_problems *p, json_t *mask)
{
	static const char *const allowed[] = {"values_from_env", NULL};
	json_t *names, *v;
	size_t i;

	if (!mask)
		return;
	if (!json_is_object(mask)) {
		tb_config_problem(p, "$.mask", "must be an object, not %s",
		                  tb_config_type_name(mask));
		return;
	}
	tb_config_unknown_keys(p, "$.mask", mask, allowed, "values_from_env");
	names = json_object_get(mask, "values_from_env");
	if (!names)
		return;
	if (!json_is_array(names)) {
		tb_config_problem(
		    p, "$.mask.values_from_env",
		    "must be an array of environment variable names, not %s",
		    tb_config_type_name(names));
		return;
	}
	json_array_foreach(names, i, v)
	{
		char path[64];
		snprintf(path, sizeof path, "$.mask.values_from_env[%zu]", i);
		if (!json_is_string(v))
			tb_config_problem(p, path, "must be a string, not %s",
			                  tb_config_type_name(v));
		else if (!tb_config_env_name_ok(json_string_value(v)))
			tb_config_problem(
			    p, path,
			    "must be an environment variable name matching "
			    "%s (secrets are named, never written inline)",
			    ENV_RULE);
	}
}

/* Validates "audit": {"path": FILE or "-", "reads": bool}. */
static void check_audit(struct tb_config_problems *p, json_t *audit)
{
	static const char *const allowed[] = {"path", "reads", NULL};
	json_t *path, *reads;

	if (!audit)
		return;
	if (!json_is_object(audit)) {
		tb_config_problem(p, "$.audit", "must be an object, not %s",
		                  tb_config_type_name(audit));
		return;
	}
	tb_config_unknown_keys(p, "$.audit", audit, allowed, "path, reads");
	path = json_object_get(audit, "path");
	if (!json_is_string(path) || json_string_length(path) == 0 ||
	    strlen(json_string_value(path)) != json_string_length(path))
		tb_config_problem(p, "$.audit.path",
		                  "required: a file to append records to, or "
		                  "\"-\" for stderr");
	reads = json_object_get(audit, "reads");
	if (reads && !json_is_boolean(reads))
		tb_config_problem(p, "$.audit.reads",
		                  "must be true or false, not %s",
		                  tb_config_type_name(reads));
}

/* Validates the whole document; returns the number of problems. */
static unsigned validate(json_t *root, char *err, size_t errlen)
{
	static const char *const allowed[] = {
	    "default", "providers", "mask", "http", "audit", "limits", NULL};
	struct tb_config_problems p = {err, errlen, 0, 0};

	if (err && errlen)
		err[0] = '\0';
	if (!json_is_object(root)) {
		tb_config_problem(&p, "$", "must be an object, not %s",
		                  tb_config_type_name(root));
		return p.count;
	}
	tb_config_unknown_keys(&p, "$", root, allowed,
	                       "default, providers, mask, http, audit, limits");
	check_providers(&p, json_object_get(root, "providers"));
	check_default(&p, json_object_get(root, "default"),
	              json_object_get(root, "providers"));
	check_mask(&p, json_object_get(root, "mask"));
	tb_config_check_http(&p, json_object_get(root, "http"));
	check_audit(&p, json_object_get(root, "audit"));
	tb_config_check_limits(&p, json_object_get(root, "limits"));
	return p.count;
}

void tb_config_free(struct tb_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->n_instances; i++) {
		free(cfg->instances[i].name);
		free(cfg->instances[i].plugin);
		free(cfg->instances[i].settings_json);
	}
	for (size_t i = 0; i < cfg->n_mask_values; i++)
		free(cfg->mask_values[i]);
	free(cfg->instances);
	free(cfg->mask_values);
	free(cfg->default_name);
	free(cfg->source);
	tb_config_free_http(cfg->http);
	free(cfg->audit_path);
	tb_config_free_limits(cfg->limits);
	free(cfg);
}

/* Copies the instances of a validated document into cfg. */
static int take_instances(struct tb_config *cfg, json_t *providers)
{
	const char *name;
	json_t *inst;

	cfg->instances =
	    calloc(json_object_size(providers), sizeof *cfg->instances);
	if (!cfg->instances)
		return -1;
	json_object_foreach(providers, name, inst)
	{
		struct tb_config_instance *ci =
		    &cfg->instances[cfg->n_instances++];
		json_t *settings = json_object_get(inst, "settings");
		json_t *supervisor = json_object_get(inst, "supervisor");
		json_t *watches = json_object_get(inst, "watches");

		ci->name = strdup(name);
		ci->plugin =
		    strdup(json_string_value(json_object_get(inst, "plugin")));
		ci->settings_json =
		    settings
		        ? json_dumps(settings, JSON_COMPACT | JSON_SORT_KEYS)
		        : strdup("{}");
		ci->supervisor = supervisor ? (enum tb_sup_mode)sup_mode(
		                                  json_string_value(supervisor))
		                            : TB_SUP_MODE_AUTO;
		ci->watches = watches ? (unsigned)json_integer_value(watches)
		                      : TB_CONFIG_WATCHES_DEFAULT;
		ci->watches_set = watches != NULL;
		if (!ci->name || !ci->plugin || !ci->settings_json)
			return -1;
	}
	return 0;
}

/* Resolves mask.values_from_env: the values of the named variables that
 * are set and not empty. */
static int take_mask_values(struct tb_config *cfg, json_t *mask)
{
	json_t *names = json_object_get(mask, "values_from_env"), *v;
	size_t i;

	if (!names || json_array_size(names) == 0)
		return 0;
	cfg->mask_values = calloc(json_array_size(names), sizeof(char *));
	if (!cfg->mask_values)
		return -1;
	json_array_foreach(names, i, v)
	{
		const char *value = getenv(json_string_value(v));
		if (!value || !*value)
			continue;
		cfg->mask_values[cfg->n_mask_values] = strdup(value);
		if (!cfg->mask_values[cfg->n_mask_values++])
			return -1;
	}
	return 0;
}

struct tb_config *tb_config_parse(const char *text, const char *source,
                                  char *err, size_t errlen)
{
	json_error_t jerr;
	struct tb_config *cfg = NULL;
	json_t *root =
	    json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);

	if (!root) {
		snprintf(err, errlen, "%s:%d:%d: invalid JSON: %s", source,
		         jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	if (validate(root, err, errlen) > 0)
		goto out;
	cfg = calloc(1, sizeof *cfg);
	if (!cfg)
		goto nomem;
	cfg->source = strdup(source);
	cfg->default_name =
	    strdup(json_string_value(json_object_get(root, "default")));
	bool failed = false;
	cfg->http = tb_config_take_http(json_object_get(root, "http"), &failed);
	cfg->limits =
	    tb_config_take_limits(json_object_get(root, "limits"), &failed);
	json_t *audit = json_object_get(root, "audit");
	if (audit) {
		cfg->audit_path =
		    strdup(json_string_value(json_object_get(audit, "path")));
		cfg->audit_reads =
		    json_is_true(json_object_get(audit, "reads"));
		failed = failed || !cfg->audit_path;
	}
	if (failed || !cfg->source || !cfg->default_name ||
	    take_instances(cfg, json_object_get(root, "providers")) < 0 ||
	    take_mask_values(cfg, json_object_get(root, "mask")) < 0)
		goto nomem;
out:
	json_decref(root);
	return cfg;
nomem:
	snprintf(err, errlen, "%s: out of memory", source);
	tb_config_free(cfg);
	cfg = NULL;
	goto out;
}

/* Reads a whole file into a new NUL-terminated string. */
static char *read_text(const char *path, char *err, size_t errlen)
{
	char *text = NULL, *grown;
	size_t len = 0, cap = 0, n;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
		         strerror(errno));
		return NULL;
	}
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			if (cap > (64u << 20) ||
			    !(grown = realloc(text, cap))) {
				snprintf(err, errlen, "%s: too large", path);
				goto fail;
			}
			text = grown;
		}
		n = fread(text + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		snprintf(err, errlen, "%s: cannot read: %s", path,
		         strerror(errno));
		goto fail;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		snprintf(err, errlen, "%s: contains a NUL byte", path);
		goto fail;
	}
	fclose(f);
	return text;
fail:
	fclose(f);
	free(text);
	return NULL;
}

static struct tb_config *load_file(const char *path, char *err, size_t errlen)
{
	struct tb_config *cfg;
	char *text = read_text(path, err, errlen);

	if (!text)
		return NULL;
	cfg = tb_config_parse(text, path, err, errlen);
	free(text);
	return cfg;
}

struct tb_config *tb_config_load(const char *path, char *err, size_t errlen)
{
	const char *env = getenv("TASKBOX_CONFIG");
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	struct tb_config *cfg = NULL;
	char *user = NULL;

	if (path)
		return load_file(path, err, errlen);
	if (env && *env)
		return load_file(env, err, errlen);
	if (xdg && *xdg && xdg[0] == '/') {
		if (asprintf(&user, "%s/taskbox/config.json", xdg) < 0)
			user = NULL;
	} else if (home && *home) {
		if (asprintf(&user, "%s/.config/taskbox/config.json", home) < 0)
			user = NULL;
	}
	if (user && access(user, F_OK) == 0)
		cfg = load_file(user, err, errlen);
	else
		cfg =
		    tb_config_parse(BUILTIN_TEXT, BUILTIN_SOURCE, err, errlen);
	free(user);
	return cfg;
}
