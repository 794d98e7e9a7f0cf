/* Ownership (ABI 1.5): describe answers from what connect learnt of a
 * sandbox (its owner annotation, creation and expiry), and list LISTs the
 * instance's Pods or Sandboxes by label selector (managed-by=taskbox, and
 * the owner's hash label when an owner is asked for), page by page through
 * limit and continue, keeping only live objects whose owner annotation is
 * exactly the one asked for. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_int.h"

#define HAS(p, type, field)                                                    \
	((p)->struct_size >= offsetof(type, field) + sizeof((p)->field))

int tb_k8s_describe(struct tb_k8s_conn *c, struct taskbox_sandbox_info *info,
                    char *errbuf, size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	if (HAS(info, struct taskbox_sandbox_info, id))
		snprintf(info->id, sizeof info->id, "%s", c->id);
	if (HAS(info, struct taskbox_sandbox_info, owner))
		snprintf(info->owner, sizeof info->owner, "%s", c->owner);
	if (HAS(info, struct taskbox_sandbox_info, created_s))
		info->created_s = c->created > 0 ? (int64_t)c->created : 0;
	if (HAS(info, struct taskbox_sandbox_info, expires_s))
		info->expires_s = c->expires > 0 ? (int64_t)c->expires : 0;
	return TASKBOX_OK;
}

/* s percent-encoded (all but RFC 3986's unreserved characters), appended
 * to out, which has room for 3 * strlen(s) more bytes. */
static void append_escaped(char *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *p = out + strlen(out);

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
		    ch == '_' || ch == '~') {
			*p++ = (char)ch;
		} else {
			*p++ = '%';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 15];
		}
	}
	*p = '\0';
}

/* The LIST request's path: selector, page size and continue token (NULL
 * for the first page). malloc'd, NULL without memory. */
static char *list_path(struct tb_k8s *inst, const char *selector,
                       unsigned limit, const char *cont)
{
	char base[512];
	size_t n;
	char *path;

	tb_k8s_object_path(inst, inst->kind, NULL, base, sizeof base);
	n = strlen(base) + 3 * strlen(selector) + 64 +
	    (cont ? 3 * strlen(cont) : 0);
	path = malloc(n);
	if (!path)
		return NULL;
	snprintf(path, n, "%s?labelSelector=", base);
	append_escaped(path, selector);
	snprintf(path + strlen(path), n - strlen(path), "&limit=%u", limit);
	if (cont) {
		strcat(path, "&continue=");
		append_escaped(path, cont);
	}
	return path;
}

/* One listed object: 1 and info filled when it is a live sandbox of this
 * instance whose owner is owner (any, when NULL), else 0. */
static int listed(struct tb_k8s *inst, json_t *obj, const char *owner,
                  time_t now, struct taskbox_sandbox_info *info)
{
	json_t *meta = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *uid = json_string_value(json_object_get(meta, "uid"));
	const char *by = json_string_value(json_object_get(
	    json_object_get(meta, "labels"), TB_K8S_MANAGED_BY));
	char n[64], u[64], why[256];
	time_t created, expires;
	int r;

	if (!name || !uid || !by || strcmp(by, "taskbox") != 0 ||
	    json_object_get(meta, "deletionTimestamp"))
		return 0;
	/* A Sandbox's pod is its Sandbox's, not a sandbox of kind pod. */
	if (inst->kind == TB_K8S_POD &&
	    json_array_size(json_object_get(meta, "ownerReferences")))
		return 0;
	if (strlen(name) + 1 + strlen(uid) >= sizeof info->id)
		return 0;
	memset(info, 0, sizeof *info);
	info->struct_size = sizeof *info;
	snprintf(info->id, sizeof info->id, "%s.%s", name, uid);
	if (tb_k8s_split_id(info->id, n, sizeof n, u, sizeof u) != 0)
		return 0;
	if (tb_k8s_object_meta(obj, info->owner, sizeof info->owner, &created,
	                       &expires) != 0)
		return 0;
	if (owner && strcmp(info->owner, owner) != 0)
		return 0;
	if (expires && expires <= now)
		return 0;
	r = inst->kind == TB_K8S_POD
	        ? tb_k8s_pod_readiness(obj, why, sizeof why)
	        : tb_k8s_sandbox_readiness(obj, why, sizeof why);
	if (r == -TASKBOX_E_GONE)
		return 0;
	info->created_s = (int64_t)created;
	info->expires_s = (int64_t)expires;
	return 1;
}

/* One LIST page: each called for what it holds; *cont set to the next
 * page's token (malloc'd) or NULL; *stop set when each stopped. */
static int list_page(struct tb_k8s *inst, const char *path, const char *owner,
                     taskbox_list_fn each, void *arg, char **cont, int *stop,
                     char *errbuf, size_t errlen)
{
	const char *what = inst->kind == TB_K8S_POD
	                       ? "list pods"
	                       : "list sandboxes.agents.x-k8s.io";
	struct taskbox_sandbox_info info;
	struct tb_k8s_resp resp;
	json_t *page, *items, *item;
	const char *next;
	time_t now = time(NULL);
	size_t i;
	int rc;

	*cont = NULL;
	rc = tb_k8s_rest(inst, "GET", path, NULL, NULL, &resp, errbuf, errlen);
	if (rc != TASKBOX_OK)
		return rc;
	if (resp.status == 410) {
		tb_k8s_resp_free(&resp);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_UNAVAILABLE,
		                   "%s: HTTP 410: the listing's continue "
		                   "token expired; list again",
		                   what);
	}
	if (resp.status == 403) {
		tb_k8s_resp_free(&resp);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_PERMISSION,
		                   "%s: HTTP 403: grant the verb list on %s in "
		                   "namespace %s (see the k8s provider's RBAC)",
		                   what,
		                   inst->kind == TB_K8S_POD
		                       ? "pods"
		                       : "sandboxes.agents.x-k8s.io",
		                   inst->namespace);
	}
	if (resp.status != 200) {
		rc = tb_k8s_rest_fail(&resp, what, errbuf, errlen);
		tb_k8s_resp_free(&resp);
		return rc;
	}
	page = json_loadb(resp.body, resp.len, 0, NULL);
	tb_k8s_resp_free(&resp);
	items = json_object_get(page, "items");
	if (!json_is_object(page) ||
	    (items && !json_is_array(items) && !json_is_null(items))) {
		json_decref(page);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                   "%s: the apiserver's answer has no items",
		                   what);
	}
	json_array_foreach(items, i, item)
	{
		if (listed(inst, item, owner, now, &info) && each(arg, &info)) {
			*stop = 1;
			break;
		}
	}
	next = json_string_value(
	    json_object_get(json_object_get(page, "metadata"), "continue"));
	if (!*stop && next && *next && !(*cont = strdup(next)))
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                 "out of memory");
	json_decref(page);
	return rc;
}

int tb_k8s_list(struct tb_k8s *inst, const char *owner, taskbox_list_fn each,
                void *arg, char *errbuf, size_t errlen)
{
	char selector[160], hash[17];
	char *cont = NULL, *path;
	int stop = 0, rc;

	snprintf(selector, sizeof selector, TB_K8S_MANAGED_BY "=taskbox");
	if (owner && *owner) {
		tb_k8s_owner_hash(owner, hash);
		snprintf(selector + strlen(selector),
		         sizeof selector - strlen(selector),
		         "," TB_K8S_OWNER_LABEL "=%s", hash);
	}
	do {
		path = list_path(inst, selector, TB_K8S_LIST_LIMIT, cont);
		free(cont);
		cont = NULL;
		if (!path)
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
			                   "out of memory");
		rc = list_page(inst, path, owner, each, arg, &cont, &stop,
		               errbuf, errlen);
		free(path);
	} while (rc == TASKBOX_OK && cont);
	free(cont);
	return rc;
}

/* Counts nothing: the probe only needs the answer. */
static int ignore(void *arg, const struct taskbox_sandbox_info *info)
{
	(void)arg;
	(void)info;
	return 1;
}

int tb_k8s_list_probe(struct tb_k8s *inst, char *errbuf, size_t errlen)
{
	char *cont = NULL, *path;
	int stop = 0, rc;

	path = list_path(inst, TB_K8S_MANAGED_BY "=taskbox", 1, NULL);
	if (!path)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	rc = list_page(inst, path, NULL, ignore, NULL, &cont, &stop, errbuf,
	               errlen);
	free(path);
	free(cont);
	if (rc == TASKBOX_E_NOT_FOUND)
		rc =
		    tb_k8s_fail(errbuf, errlen, TASKBOX_E_UNSUPPORTED,
		                "list sandboxes.agents.x-k8s.io: HTTP 404: the "
		                "cluster does not serve "
		                "agents.x-k8s.io/v1beta1 (is agent-sandbox "
		                "installed?)");
	return rc;
}
