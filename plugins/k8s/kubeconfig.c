/* Credentials: a kubeconfig context (read with libyaml) or the in-cluster
 * service account. Both fill a struct tb_k8s_cluster. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "k8s_int.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define FILE_CAP (4 * 1024 * 1024)

/* ---- YAML to jansson: mappings, sequences and scalars (as strings) ---- */

static json_t *yaml_node(yaml_parser_t *p, yaml_event_t *ev, int depth);

/* Reads the events after a start event up to its end into a container. */
static json_t *yaml_children(yaml_parser_t *p, int mapping, int depth)
{
	json_t *c = mapping ? json_object() : json_array();
	yaml_event_t ev;

	if (!c || depth > 64) {
		json_decref(c);
		return NULL;
	}
	for (;;) {
		json_t *key = NULL, *val;

		if (!yaml_parser_parse(p, &ev))
			goto bad;
		if (ev.type == YAML_MAPPING_END_EVENT ||
		    ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return c;
		}
		if (mapping) {
			key = yaml_node(p, &ev, depth + 1);
			if (!json_is_string(key)) {
				json_decref(key);
				goto bad;
			}
			if (!yaml_parser_parse(p, &ev)) {
				json_decref(key);
				goto bad;
			}
		}
		val = yaml_node(p, &ev, depth + 1);
		if (!val) {
			json_decref(key);
			goto bad;
		}
		if (mapping)
			json_object_set_new(c, json_string_value(key), val);
		else
			json_array_append_new(c, val);
		json_decref(key);
	}
bad:
	json_decref(c);
	return NULL;
}

/* Turns the node that starts with ev (consumed) into JSON. */
static json_t *yaml_node(yaml_parser_t *p, yaml_event_t *ev, int depth)
{
	json_t *v = NULL;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		v = json_stringn((const char *)ev->data.scalar.value,
		                 ev->data.scalar.length);
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    (ev->data.scalar.length == 0 ||
		     strcmp((const char *)ev->data.scalar.value, "null") == 0 ||
		     strcmp((const char *)ev->data.scalar.value, "~") == 0)) {
			json_decref(v);
			v = json_null();
		}
		break;
	case YAML_MAPPING_START_EVENT:
		yaml_event_delete(ev);
		return yaml_children(p, 1, depth);
	case YAML_SEQUENCE_START_EVENT:
		yaml_event_delete(ev);
		return yaml_children(p, 0, depth);
	default: /* an alias, or a stray event */
		break;
	}
	yaml_event_delete(ev);
	return v;
}

/* Parses the first document of a YAML text into JSON, or NULL. */
static json_t *yaml_to_json(const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	json_t *root = NULL;

	if (!yaml_parser_initialize(&p))
		return NULL;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (yaml_parser_parse(&p, &ev)) {
		yaml_event_type_t t = ev.type;
		if (t == YAML_MAPPING_START_EVENT ||
		    t == YAML_SEQUENCE_START_EVENT || t == YAML_SCALAR_EVENT) {
			root = yaml_node(&p, &ev, 0);
			break;
		}
		yaml_event_delete(&ev);
		if (t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&p);
	return root;
}

/* ---- files ---- */

/* Reads a whole file (at most FILE_CAP) into a malloc'd NUL-terminated
 * buffer; -1 with errno set on failure. */
static int slurp(const char *path, char **out, size_t *outlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return -1;
	for (;;) {
		if (cap - len < 4096) {
			char *grown;
			cap = cap ? cap * 2 : 8192;
			if (cap > FILE_CAP + 8192 ||
			    !(grown = realloc(buf, cap))) {
				free(buf);
				fclose(f);
				errno = cap > FILE_CAP ? EFBIG : ENOMEM;
				return -1;
			}
			buf = grown;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

/* A file named by a kubeconfig: relative to the kubeconfig's directory. */
static char *relative_to(const char *kubeconfig, const char *file)
{
	const char *slash = strrchr(kubeconfig, '/');
	size_t dirlen = slash ? (size_t)(slash - kubeconfig) : 0;
	char *out;

	if (file[0] == '/' || !slash)
		return strdup(file);
	out = malloc(dirlen + strlen(file) + 2);
	if (out)
		sprintf(out, "%.*s/%s", (int)dirlen, kubeconfig, file);
	return out;
}

int tb_k8s_base64_decode(const char *s, char **out, size_t *outlen)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), len = 0;
	unsigned acc = 0;
	int bits = 0;
	char *buf = malloc(n / 4 * 3 + 4);

	if (!buf)
		return -1;
	for (; *s; s++) {
		const char *at;
		if (*s == '=' || *s == ' ' || *s == '\n' || *s == '\r' ||
		    *s == '\t')
			continue;
		at = strchr(abc, *s);
		if (!at) {
			free(buf);
			return -1;
		}
		acc = (acc << 6) | (unsigned)(at - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[len++] = (char)((acc >> bits) & 0xff);
		}
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

/* ---- kubeconfig ---- */

/* The member "inner" of the entry of list (an array of {name, inner})
 * whose name is name, or NULL. */
static json_t *named(json_t *root, const char *list, const char *name,
                     const char *inner)
{
	size_t i;
	json_t *e;

	json_array_foreach(json_object_get(root, list), i, e)
	{
		const char *n = json_string_value(json_object_get(e, "name"));
		if (n && strcmp(n, name) == 0)
			return json_object_get(e, inner);
	}
	return NULL;
}

static const char *str(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s && *s ? s : NULL;
}

/* Takes a "-data" field (base64) or a file field of obj into *data or
 * *file. */
static int take_pem(const char *kubeconfig, json_t *obj, const char *field,
                    char **file, char **data, size_t *len, char *errbuf,
                    size_t errlen)
{
	char key[64];
	const char *d, *f;

	snprintf(key, sizeof key, "%s-data", field);
	d = str(obj, key);
	f = str(obj, field);
	if (d) {
		if (tb_k8s_base64_decode(d, data, len) != 0)
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
			                   "kubeconfig %s: %s is not base64",
			                   kubeconfig, key);
	} else if (f) {
		*file = relative_to(kubeconfig, f);
		if (!*file)
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
			                   "out of memory");
	}
	return TASKBOX_OK;
}

static int strip_server(struct tb_k8s_cluster *cl, const char *server,
                        const char *where, char *errbuf, size_t errlen)
{
	size_t n;

	if (strncmp(server, "https://", 8) != 0 &&
	    strncmp(server, "http://", 7) != 0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "%s: server must be an https:// or http:// "
		                   "URL",
		                   where);
	cl->server = strdup(server);
	if (!cl->server)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	n = strlen(cl->server);
	while (n > 0 && cl->server[n - 1] == '/')
		cl->server[--n] = '\0';
	return TASKBOX_OK;
}

static int read_token_file(struct tb_k8s_cluster *cl, char *errbuf,
                           size_t errlen)
{
	char *text;
	size_t len;

	if (slurp(cl->token_file, &text, &len) != 0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_AUTH,
		                   "cannot read the token file %s: %s",
		                   cl->token_file, strerror(errno));
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' ||
	                   text[len - 1] == ' '))
		text[--len] = '\0';
	free(cl->token);
	cl->token = text;
	return TASKBOX_OK;
}

static int load_user(const char *path, json_t *user, struct tb_k8s_cluster *cl,
                     char *errbuf, size_t errlen)
{
	const char *tok = str(user, "token"), *tf = str(user, "tokenFile");
	int rc;

	if (json_object_get(user, "exec") &&
	    !json_is_null(json_object_get(user, "exec")))
		return tb_k8s_fail(
		    errbuf, errlen, TASKBOX_E_UNSUPPORTED,
		    "kubeconfig %s: the user runs an exec credential plugin, "
		    "which the k8s provider does not run yet: give a token, "
		    "tokenFile or client certificate instead",
		    path);
	if (json_object_get(user, "auth-provider"))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_UNSUPPORTED,
		                   "kubeconfig %s: auth-provider is not "
		                   "supported: give a token, tokenFile or "
		                   "client certificate",
		                   path);
	rc = take_pem(path, user, "client-certificate", &cl->cert_file,
	              &cl->cert_data, &cl->cert_len, errbuf, errlen);
	if (rc == TASKBOX_OK)
		rc = take_pem(path, user, "client-key", &cl->key_file,
		              &cl->key_data, &cl->key_len, errbuf, errlen);
	if (rc != TASKBOX_OK)
		return rc;
	if (!(cl->cert_file || cl->cert_data) !=
	    !(cl->key_file || cl->key_data))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "kubeconfig %s: a client certificate needs "
		                   "its key and the other way round",
		                   path);
	if (tok) {
		if (!(cl->token = strdup(tok)))
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
			                   "out of memory");
	} else if (tf) {
		if (!(cl->token_file = relative_to(path, tf)))
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
			                   "out of memory");
		return read_token_file(cl, errbuf, errlen);
	}
	return TASKBOX_OK;
}

static int load_cluster(const char *path, json_t *cluster,
                        struct tb_k8s_cluster *cl, char *errbuf, size_t errlen)
{
	const char *server = str(cluster, "server");
	const char *insecure = str(cluster, "insecure-skip-tls-verify");
	const char *proxy = str(cluster, "proxy-url");
	char where[600];
	int rc;

	snprintf(where, sizeof where, "kubeconfig %s", path);
	if (!server)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "%s: the cluster has no server", where);
	rc = strip_server(cl, server, where, errbuf, errlen);
	if (rc == TASKBOX_OK)
		rc = take_pem(path, cluster, "certificate-authority",
		              &cl->ca_file, &cl->ca_data, &cl->ca_len, errbuf,
		              errlen);
	if (rc != TASKBOX_OK)
		return rc;
	cl->insecure = insecure && strcmp(insecure, "true") == 0;
	if (proxy && !(cl->proxy = strdup(proxy)))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	return TASKBOX_OK;
}

int tb_k8s_kubeconfig_load(const char *path, const char *context,
                           struct tb_k8s_cluster *cl, char *errbuf,
                           size_t errlen)
{
	char *text;
	size_t len;
	json_t *root, *ctx, *cluster, *user;
	const char *cname, *uname, *ns;
	int rc;

	if (slurp(path, &text, &len) != 0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "settings.kubeconfig: cannot read %s: %s",
		                   path, strerror(errno));
	root = yaml_to_json(text, len);
	free(text);
	if (!json_is_object(root)) {
		json_decref(root);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "settings.kubeconfig: %s is not a YAML "
		                   "kubeconfig",
		                   path);
	}
	if (!context)
		context = str(root, "current-context");
	rc = TASKBOX_E_INVALID;
	if (!context) {
		tb_k8s_fail(errbuf, errlen, rc,
		            "kubeconfig %s has no current-context: set "
		            "settings.context",
		            path);
		goto out;
	}
	ctx = named(root, "contexts", context, "context");
	if (!json_is_object(ctx)) {
		tb_k8s_fail(errbuf, errlen, rc,
		            "settings.context: no context \"%s\" in %s",
		            context, path);
		goto out;
	}
	cname = str(ctx, "cluster");
	uname = str(ctx, "user");
	ns = str(ctx, "namespace");
	cluster = cname ? named(root, "clusters", cname, "cluster") : NULL;
	user = uname ? named(root, "users", uname, "user") : NULL;
	if (!json_is_object(cluster)) {
		tb_k8s_fail(errbuf, errlen, rc,
		            "kubeconfig %s: context \"%s\" names no cluster "
		            "that is defined",
		            path, context);
		goto out;
	}
	rc = load_cluster(path, cluster, cl, errbuf, errlen);
	if (rc == TASKBOX_OK && json_is_object(user))
		rc = load_user(path, user, cl, errbuf, errlen);
	if (rc == TASKBOX_OK && ns && !(cl->namespace = strdup(ns)))
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                 "out of memory");
out:
	json_decref(root);
	return rc;
}

int tb_k8s_incluster_load(const char *dir, struct tb_k8s_cluster *cl,
                          char *errbuf, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	char path[512], url[512], *ns;
	size_t len;
	int rc;

	if (!dir)
		dir = SA_DIR;
	if (!host || !*host || !port || !*port)
		return tb_k8s_fail(
		    errbuf, errlen, TASKBOX_E_INVALID,
		    "settings.in_cluster: KUBERNETES_SERVICE_HOST "
		    "and KUBERNETES_SERVICE_PORT are not set (is "
		    "taskbox running in a pod?)");
	snprintf(url, sizeof url,
	         strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host,
	         port);
	rc = strip_server(cl, url, "settings.in_cluster", errbuf, errlen);
	if (rc != TASKBOX_OK)
		return rc;
	snprintf(path, sizeof path, "%s/ca.crt", dir);
	if (!(cl->ca_file = strdup(path)))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	snprintf(path, sizeof path, "%s/token", dir);
	if (!(cl->token_file = strdup(path)))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	rc = read_token_file(cl, errbuf, errlen);
	if (rc != TASKBOX_OK)
		return rc;
	snprintf(path, sizeof path, "%s/namespace", dir);
	if (slurp(path, &ns, &len) == 0) {
		while (len > 0 && (ns[len - 1] == '\n' || ns[len - 1] == ' '))
			ns[--len] = '\0';
		cl->namespace = ns;
	}
	return TASKBOX_OK;
}

int tb_k8s_token_reload(struct tb_k8s_cluster *cl)
{
	char *old, err[8];
	int changed;

	if (!cl->token_file)
		return 0;
	pthread_mutex_lock(&cl->token_lock);
	old = cl->token ? strdup(cl->token) : NULL;
	if (read_token_file(cl, err, sizeof err) != TASKBOX_OK) {
		pthread_mutex_unlock(&cl->token_lock);
		free(old);
		return 0;
	}
	changed = !old || !cl->token || strcmp(old, cl->token) != 0;
	pthread_mutex_unlock(&cl->token_lock);
	free(old);
	return changed;
}

void tb_k8s_auth_header(struct tb_k8s_cluster *cl, char *out, size_t outlen)
{
	pthread_mutex_lock(&cl->token_lock);
	if (cl->token && *cl->token)
		snprintf(out, outlen, "Authorization: Bearer %s", cl->token);
	else if (outlen)
		out[0] = '\0';
	pthread_mutex_unlock(&cl->token_lock);
}

/* Overwrites a secret before its memory goes back. */
static void wipe_free(char *s, size_t n)
{
	volatile char *p = s;

	if (!s)
		return;
	if (!n)
		n = strlen(s);
	while (n--)
		*p++ = 0;
	free(s);
}

void tb_k8s_cluster_free(struct tb_k8s_cluster *cl)
{
	free(cl->server);
	free(cl->ca_file);
	free(cl->ca_data);
	free(cl->cert_file);
	free(cl->cert_data);
	free(cl->key_file);
	wipe_free(cl->key_data, cl->key_len);
	free(cl->token_file);
	wipe_free(cl->token, 0);
	free(cl->proxy);
	free(cl->namespace);
	cl->server = cl->ca_file = cl->ca_data = cl->cert_file = NULL;
	cl->cert_data = cl->key_file = cl->key_data = cl->token_file = NULL;
	cl->token = cl->proxy = cl->namespace = NULL;
}
