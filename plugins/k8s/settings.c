/* The k8s provider's settings: where the cluster is (a kubeconfig context,
 * or in_cluster), the namespace and kind of object, the templates, and the
 * limits. Unknown settings are refused by name; see README.md for each. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/settings.h"
#include "k8s_int.h"

#define DEFAULT_IMAGE "python:3.12-alpine"
#define DEFAULT_WORKDIR "/workspace"
#define DEFAULT_LIFETIME_S 3600u
#define MAX_LIFETIME_S 86400u
#define DEFAULT_READY_TIMEOUT_S 120u
#define DEFAULT_REQUEST_TIMEOUT_S 30u
#define DEFAULT_REAP_INTERVAL_S 60u
#define DEFAULT_CONNECTION_REUSE_S 10u

#define KNOWN                                                                  \
	"kubeconfig, context, in_cluster, service_account_dir, namespace, "    \
	"kind, image, templates, default_template, workdir, env, "             \
	"default_lifetime, max_lifetime, ready_timeout, request_timeout, "     \
	"reap_interval, max_concurrent_execs, connection_reuse"
#define KNOWN_T                                                                \
	"image, resources, runtime_class, node_selector, tolerations, "        \
	"service_account, automount_service_account_token, labels"

struct raw {
	const char *kubeconfig, *context, *sa_dir, *ns, *image, *dflt;
	int in_cluster;
	json_t *templates;
};

static int bad(char *errbuf, size_t errlen, const char *key, const char *rule)
{
	return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
	                   "settings.%s: must be %s", key, rule);
}

static int nomem(char *errbuf, size_t errlen)
{
	return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM, "out of memory");
}

/* A DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63. */
static int dns_label(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]) && s[i] != '-')
			return 0;
	return 1;
}

static int label_value(const char *s)
{
	size_t i, n = strlen(s);

	if (n > 63)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return 0;
	return 1;
}

static int label_key(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_./", s[i]))
			return 0;
	return strncmp(s, "taskbox.dev/", 12) != 0 &&
	       strcmp(s, TB_K8S_MANAGED_BY) != 0;
}

static int image_ref(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 512)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

static int seconds(json_t *v, const char *key, uint32_t min, uint32_t max,
                   uint32_t *out, char *errbuf, size_t errlen)
{
	char rule[96];

	if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min ||
	    json_integer_value(v) > (json_int_t)max) {
		snprintf(rule, sizeof rule, "an integer from %u to %u",
		         (unsigned)min, (unsigned)max);
		return bad(errbuf, errlen, key, rule);
	}
	*out = (uint32_t)json_integer_value(v);
	return TASKBOX_OK;
}

static int string(json_t *v, const char *key, int (*rule)(const char *),
                  const char *rule_text, const char **out, char *errbuf,
                  size_t errlen)
{
	if (!json_is_string(v) || (rule && !rule(json_string_value(v))))
		return bad(errbuf, errlen, key, rule_text);
	*out = json_string_value(v);
	return TASKBOX_OK;
}

/* An object whose values are strings of label_value (or any string). */
static int string_map(json_t *v, const char *where, int labels, char *errbuf,
                      size_t errlen)
{
	const char *k;
	json_t *x;

	if (!json_is_object(v))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "%s: must be an object of strings", where);
	json_object_foreach(v, k, x)
	{
		if (!json_is_string(x) || !label_key(k) ||
		    (labels && !label_value(json_string_value(x))))
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
			                   "%s.%.100s: must be a label key "
			                   "(not taskbox's own) with a string "
			                   "value%s",
			                   where, k,
			                   labels ? " of at most 63 bytes of "
			                            "[A-Za-z0-9-_.]"
			                          : "");
	}
	return TASKBOX_OK;
}

static int template_parse(const char *name, json_t *v,
                          struct tb_k8s_template *t, char *errbuf,
                          size_t errlen)
{
	char where[160];
	const char *k;
	json_t *x;

	snprintf(where, sizeof where, "settings.templates.%.64s", name);
	if (!dns_label(name) && !label_value(name))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "%s: a template name must be 1..63 bytes of "
		                   "[A-Za-z0-9-_.]",
		                   where);
	if (!json_is_object(v))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "%s: must be an object (" KNOWN_T ")",
		                   where);
	if (!(t->name = strdup(name)))
		return nomem(errbuf, errlen);
	json_object_foreach(v, k, x)
	{
		int ok = 1;
		if (strcmp(k, "image") == 0 && json_is_string(x) &&
		    image_ref(json_string_value(x)))
			ok = (t->image = strdup(json_string_value(x))) != NULL;
		else if (strcmp(k, "resources") == 0 && json_is_object(x))
			t->resources = json_incref(x);
		else if (strcmp(k, "runtime_class") == 0 && json_is_string(x) &&
		         dns_label(json_string_value(x)))
			ok = (t->runtime_class =
			          strdup(json_string_value(x))) != NULL;
		else if (strcmp(k, "service_account") == 0 &&
		         json_is_string(x) && dns_label(json_string_value(x)))
			ok = (t->service_account =
			          strdup(json_string_value(x))) != NULL;
		else if (strcmp(k, "automount_service_account_token") == 0 &&
		         json_is_boolean(x))
			t->automount_token = json_is_true(x);
		else if (strcmp(k, "tolerations") == 0 && json_is_array(x))
			t->tolerations = json_incref(x);
		else if (strcmp(k, "node_selector") == 0 ||
		         strcmp(k, "labels") == 0) {
			char w[200];
			int labels = strcmp(k, "labels") == 0;
			int rc;
			snprintf(w, sizeof w, "%s.%s", where, k);
			rc = string_map(x, w, labels, errbuf, errlen);
			if (rc != TASKBOX_OK)
				return rc;
			if (labels)
				t->labels = json_incref(x);
			else
				t->node_selector = json_incref(x);
		} else if (strcmp(k, "image") == 0 ||
		           strcmp(k, "resources") == 0 ||
		           strcmp(k, "runtime_class") == 0 ||
		           strcmp(k, "service_account") == 0 ||
		           strcmp(k, "automount_service_account_token") == 0 ||
		           strcmp(k, "tolerations") == 0)
			return tb_k8s_fail(
			    errbuf, errlen, TASKBOX_E_INVALID,
			    "%s.%s: must be %s", where, k,
			    strcmp(k, "image") == 0 ? "an image reference"
			    : strcmp(k, "resources") == 0
			        ? "an object (a container's resources)"
			    : strcmp(k, "tolerations") == 0
			        ? "an array of tolerations"
			    : strcmp(k, "automount_service_account_token") == 0
			        ? "true or false"
			        : "a DNS label");
		else
			return tb_k8s_fail(
			    errbuf, errlen, TASKBOX_E_INVALID,
			    "%s.%.64s: unknown setting (known: " KNOWN_T ")",
			    where, k);
		if (!ok)
			return nomem(errbuf, errlen);
	}
	if (!t->image)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "%s.image: is required", where);
	return TASKBOX_OK;
}

static int templates_parse(struct tb_k8s *inst, struct raw *raw, char *errbuf,
                           size_t errlen)
{
	size_t n = raw->templates ? json_object_size(raw->templates) : 0, i = 0;
	const char *k;
	json_t *v;
	int rc;

	if (raw->templates && n == 0)
		return bad(errbuf, errlen, "templates",
		           "an object with at least one template");
	inst->templates = calloc(n ? n : 1, sizeof *inst->templates);
	if (!inst->templates)
		return nomem(errbuf, errlen);
	if (!raw->templates) {
		inst->ntemplates = 1;
		inst->templates[0].name = strdup("default");
		inst->templates[0].image =
		    strdup(raw->image ? raw->image : DEFAULT_IMAGE);
		if (!inst->templates[0].name || !inst->templates[0].image)
			return nomem(errbuf, errlen);
		if (raw->dflt && strcmp(raw->dflt, "default") != 0)
			return bad(errbuf, errlen, "default_template",
			           "the name of a template in "
			           "settings.templates");
		return TASKBOX_OK;
	}
	if (raw->image)
		return bad(errbuf, errlen, "image",
		           "left out when settings.templates is given (each "
		           "template names its image)");
	json_object_foreach(raw->templates, k, v)
	{
		inst->ntemplates = i + 1;
		rc = template_parse(k, v, &inst->templates[i], errbuf, errlen);
		if (rc != TASKBOX_OK)
			return rc;
		i++;
	}
	if (!raw->dflt && n == 1)
		return TASKBOX_OK;
	for (i = 0; i < n; i++)
		if (strcmp(inst->templates[i].name,
		           raw->dflt ? raw->dflt : "default") == 0) {
			inst->default_template = i;
			return TASKBOX_OK;
		}
	return bad(errbuf, errlen, "default_template",
	           "the name of a template in settings.templates (needed "
	           "when there are several and none is called \"default\")");
}

/* One "NAME=value" of settings.env into the container's env list. */
static int env_add(void *ctx, char *entry)
{
	struct tb_k8s *inst = ctx;
	char *eq = strchr(entry, '=');
	int rc;

	*eq = '\0';
	rc =
	    json_array_append_new(inst->env, json_pack("{ss ss}", "name", entry,
	                                               "value", eq + 1)) == 0
	        ? TASKBOX_OK
	        : TASKBOX_E_NOMEM;
	free(entry);
	return rc;
}

static int take(struct tb_k8s *inst, struct raw *raw, const char *key,
                json_t *v, char *errbuf, size_t errlen)
{
	if (strcmp(key, "kubeconfig") == 0)
		return string(v, key, image_ref, "a file path",
		              &raw->kubeconfig, errbuf, errlen);
	if (strcmp(key, "context") == 0)
		return string(v, key, image_ref, "a context name",
		              &raw->context, errbuf, errlen);
	if (strcmp(key, "service_account_dir") == 0)
		return string(v, key, image_ref, "a directory", &raw->sa_dir,
		              errbuf, errlen);
	if (strcmp(key, "in_cluster") == 0) {
		if (!json_is_boolean(v))
			return bad(errbuf, errlen, key, "true or false");
		raw->in_cluster = json_is_true(v);
		return TASKBOX_OK;
	}
	if (strcmp(key, "namespace") == 0)
		return string(v, key, dns_label, "a namespace name (DNS label)",
		              &raw->ns, errbuf, errlen);
	if (strcmp(key, "kind") == 0) {
		const char *k = NULL;
		int rc = string(v, key, NULL, "\"pod\" or \"sandbox\"", &k,
		                errbuf, errlen);
		if (rc != TASKBOX_OK)
			return rc;
		if (strcmp(k, "pod") == 0)
			inst->kind = TB_K8S_POD;
		else if (strcmp(k, "sandbox") == 0)
			inst->kind = TB_K8S_SANDBOX;
		else
			return bad(errbuf, errlen, key,
			           "\"pod\" or \"sandbox\"");
		return TASKBOX_OK;
	}
	if (strcmp(key, "image") == 0)
		return string(v, key, image_ref, "an image reference",
		              &raw->image, errbuf, errlen);
	if (strcmp(key, "templates") == 0) {
		if (!json_is_object(v))
			return bad(errbuf, errlen, key,
			           "an object of name: {image, ...}");
		raw->templates = v;
		return TASKBOX_OK;
	}
	if (strcmp(key, "default_template") == 0)
		return string(v, key, NULL, "a template name", &raw->dflt,
		              errbuf, errlen);
	if (strcmp(key, "workdir") == 0) {
		const char *w = NULL;
		int rc =
		    string(v, key, image_ref, "an absolute path without spaces",
		           &w, errbuf, errlen);
		if (rc == TASKBOX_OK && w[0] != '/')
			rc = bad(errbuf, errlen, key, "an absolute path");
		if (rc == TASKBOX_OK) {
			free(inst->workdir);
			if (!(inst->workdir = strdup(w)))
				rc = nomem(errbuf, errlen);
		}
		return rc;
	}
	if (strcmp(key, "env") == 0) {
		json_decref(inst->env);
		if (!(inst->env = json_array()))
			return nomem(errbuf, errlen);
		return tb_settings_env(v, NULL, env_add, inst, errbuf, errlen);
	}
	if (strcmp(key, "default_lifetime") == 0)
		return seconds(v, key, 1, MAX_LIFETIME_S,
		               &inst->default_lifetime_s, errbuf, errlen);
	if (strcmp(key, "max_lifetime") == 0)
		return seconds(v, key, 60, 7 * 86400u, &inst->max_lifetime_s,
		               errbuf, errlen);
	if (strcmp(key, "ready_timeout") == 0)
		return seconds(v, key, 1, 3600, &inst->ready_timeout_s, errbuf,
		               errlen);
	if (strcmp(key, "request_timeout") == 0)
		return seconds(v, key, 1, 600, &inst->request_timeout_s, errbuf,
		               errlen);
	if (strcmp(key, "reap_interval") == 0)
		return seconds(v, key, 0, 3600, &inst->reap_interval_s, errbuf,
		               errlen);
	if (strcmp(key, "max_concurrent_execs") == 0)
		return seconds(v, key, 0, 4096, &inst->exec_limit, errbuf,
		               errlen);
	if (strcmp(key, "connection_reuse") == 0)
		return seconds(v, key, 0, 300, &inst->connection_reuse_s,
		               errbuf, errlen);
	return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
	                   "settings.%.64s: unknown setting (known: " KNOWN ")",
	                   key);
}

/* The kubeconfig path: the setting, else $KUBECONFIG's first entry, else
 * ~/.kube/config. */
static char *kubeconfig_path(const char *setting)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	char *p;

	if (setting)
		return strdup(setting);
	if (env && *env) {
		p = strdup(env);
		if (p && strchr(p, ':'))
			*strchr(p, ':') = '\0';
		return p;
	}
	if (!home || !*home)
		home = "/root";
	p = malloc(strlen(home) + 16);
	if (p)
		sprintf(p, "%s/.kube/config", home);
	return p;
}

int tb_k8s_settings(struct tb_k8s *inst, const char *settings_json,
                    char *errbuf, size_t errlen)
{
	struct raw raw;
	json_t *root;
	const char *key;
	json_t *v;
	char *path;
	int rc = TASKBOX_OK;

	memset(&raw, 0, sizeof raw);
	inst->default_lifetime_s = DEFAULT_LIFETIME_S;
	inst->max_lifetime_s = MAX_LIFETIME_S;
	inst->ready_timeout_s = DEFAULT_READY_TIMEOUT_S;
	inst->request_timeout_s = DEFAULT_REQUEST_TIMEOUT_S;
	inst->reap_interval_s = DEFAULT_REAP_INTERVAL_S;
	inst->connection_reuse_s = DEFAULT_CONNECTION_REUSE_S;
	root = json_loads(settings_json ? settings_json : "{}", 0, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "settings: must be a JSON object");
	}
	json_object_foreach(root, key, v)
	{
		rc = take(inst, &raw, key, v, errbuf, errlen);
		if (rc != TASKBOX_OK)
			goto out;
	}
	if (raw.in_cluster && (raw.kubeconfig || raw.context)) {
		rc = bad(errbuf, errlen, "in_cluster",
		         "left out (or false) when kubeconfig or context is "
		         "given");
		goto out;
	}
	if (inst->default_lifetime_s > inst->max_lifetime_s) {
		rc = bad(errbuf, errlen, "default_lifetime",
		         "at most settings.max_lifetime");
		goto out;
	}
	if (!inst->workdir && !(inst->workdir = strdup(DEFAULT_WORKDIR))) {
		rc = nomem(errbuf, errlen);
		goto out;
	}
	rc = templates_parse(inst, &raw, errbuf, errlen);
	if (rc != TASKBOX_OK)
		goto out;
	if (raw.in_cluster) {
		rc = tb_k8s_incluster_load(raw.sa_dir, &inst->cl, errbuf,
		                           errlen);
	} else {
		if (!(path = kubeconfig_path(raw.kubeconfig))) {
			rc = nomem(errbuf, errlen);
			goto out;
		}
		rc = tb_k8s_kubeconfig_load(path, raw.context, &inst->cl,
		                            errbuf, errlen);
		free(path);
	}
	if (rc != TASKBOX_OK)
		goto out;
	inst->namespace = strdup(raw.ns               ? raw.ns
	                         : inst->cl.namespace ? inst->cl.namespace
	                                              : "default");
	if (!inst->namespace)
		rc = nomem(errbuf, errlen);
out:
	json_decref(root);
	return rc;
}

void tb_k8s_settings_free(struct tb_k8s *inst)
{
	size_t i;

	for (i = 0; i < inst->ntemplates; i++) {
		struct tb_k8s_template *t = &inst->templates[i];
		free(t->name);
		free(t->image);
		free(t->runtime_class);
		free(t->service_account);
		json_decref(t->resources);
		json_decref(t->node_selector);
		json_decref(t->labels);
		json_decref(t->tolerations);
	}
	free(inst->templates);
	inst->templates = NULL;
	json_decref(inst->env);
	inst->env = NULL;
	inst->ntemplates = 0;
	free(inst->namespace);
	free(inst->workdir);
	inst->namespace = inst->workdir = NULL;
	tb_k8s_cluster_free(&inst->cl);
}
