/* The lifecycle of a sandbox's object through the REST API: create (POST,
 * then wait until it runs), connect (GET, and check it is taskbox's and the
 * same object), destroy (DELETE with the UID as precondition), renew (a
 * merge patch of the expiry) and the "is it still there" check after an
 * exec failed. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "k8s_int.h"

#define MERGE_PATCH "application/merge-patch+json"

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static const char *meta_str(json_t *obj, const char *k)
{
	return jstr(json_object_get(obj, "metadata"), k);
}

static const char *label(json_t *obj, const char *k)
{
	return jstr(json_object_get(json_object_get(obj, "metadata"), "labels"),
	            k);
}

static const char *annotation(json_t *obj, const char *k)
{
	return jstr(
	    json_object_get(json_object_get(obj, "metadata"), "annotations"),
	    k);
}

/* GETs path into *obj: TASKBOX_OK, NOT_FOUND (404), or another code. */
static int get_object(struct tb_k8s *inst, const char *path, json_t **obj,
                      const char *what, char *errbuf, size_t errlen)
{
	struct tb_k8s_resp resp;
	int rc =
	    tb_k8s_rest(inst, "GET", path, NULL, NULL, &resp, errbuf, errlen);

	*obj = NULL;
	if (rc != TASKBOX_OK)
		return rc;
	if (resp.status != 200) {
		rc = tb_k8s_rest_fail(&resp, what, errbuf, errlen);
		tb_k8s_resp_free(&resp);
		return rc;
	}
	*obj = json_loadb(resp.body, resp.len, 0, NULL);
	tb_k8s_resp_free(&resp);
	if (!json_is_object(*obj)) {
		json_decref(*obj);
		*obj = NULL;
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                   "%s: the apiserver's answer is not a JSON "
		                   "object",
		                   what);
	}
	return TASKBOX_OK;
}

/* The pod that runs a Sandbox's commands: its annotation, else its name. */
static void sandbox_pod_name(json_t *sb, char *out, size_t outlen)
{
	const char *p = annotation(sb, TB_K8S_POD_NAME_ANN);

	snprintf(out, outlen, "%s", p && *p ? p : meta_str(sb, "name"));
}

/* Whether the object can run commands yet: 1, 0, or -code with why. */
static int readiness(struct tb_k8s *inst, json_t *obj, char *why, size_t whylen)
{
	char pod[254], path[512], err[64];
	json_t *p;
	int r;

	if (inst->kind == TB_K8S_POD)
		return tb_k8s_pod_readiness(obj, why, whylen);
	r = tb_k8s_sandbox_readiness(obj, why, whylen);
	if (r != 0)
		return r;
	/* Not ready: the pod may say why it never will be. */
	sandbox_pod_name(obj, pod, sizeof pod);
	tb_k8s_object_path(inst, TB_K8S_POD, pod, path, sizeof path);
	if (get_object(inst, path, &p, "get pod", err, sizeof err) != 0)
		return 0;
	r = tb_k8s_pod_readiness(p, why, whylen);
	json_decref(p);
	return r < 0 ? r : 0;
}

static int delete_object(struct tb_k8s *inst, const char *name, const char *uid,
                         char *errbuf, size_t errlen)
{
	char path[512], body[256];
	struct tb_k8s_resp resp;
	int rc;

	tb_k8s_object_path(inst, inst->kind, name, path, sizeof path);
	snprintf(
	    body, sizeof body,
	    "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	    "\"gracePeriodSeconds\":1,\"propagationPolicy\":\"Background\","
	    "\"preconditions\":{\"uid\":\"%s\"}}",
	    uid);
	rc = tb_k8s_rest(inst, "DELETE", path, body, NULL, &resp, errbuf,
	                 errlen);
	if (rc != TASKBOX_OK)
		return rc;
	if (resp.status == 404 || resp.status == 409)
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                 "sandbox %s.%s does not exist (any more)",
		                 name, uid);
	else if (resp.status != 200 && resp.status != 202)
		rc = tb_k8s_rest_fail(&resp, "delete", errbuf, errlen);
	tb_k8s_resp_free(&resp);
	return rc;
}

/* Polls until the new object runs; on failure the code and the reason. */
static int wait_ready(struct tb_k8s *inst, const char *name, char *pod,
                      size_t podlen, char *errbuf, size_t errlen)
{
	uint64_t end = tb_k8s_now_ms() + inst->ready_timeout_s * 1000u;
	useconds_t pause = 100000;
	char path[512], why[400] = "";
	json_t *obj;
	int rc, r;

	tb_k8s_object_path(inst, inst->kind, name, path, sizeof path);
	for (;;) {
		rc = get_object(inst, path, &obj, "wait for the new sandbox",
		                errbuf, errlen);
		if (rc != TASKBOX_OK)
			return rc;
		r = readiness(inst, obj, why, sizeof why);
		if (r == 1) {
			if (inst->kind == TB_K8S_SANDBOX)
				sandbox_pod_name(obj, pod, podlen);
			else
				snprintf(pod, podlen, "%s", name);
		}
		json_decref(obj);
		if (r == 1)
			return TASKBOX_OK;
		if (r < 0)
			return tb_k8s_fail(errbuf, errlen, -r,
			                   "sandbox %s did not start: %s", name,
			                   why);
		if (tb_k8s_now_ms() > end)
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_TIMEOUT,
			                   "sandbox %s was not ready within "
			                   "%u s (settings.ready_timeout)",
			                   name,
			                   (unsigned)inst->ready_timeout_s);
		usleep(pause);
		if (pause < 1000000)
			pause *= 2;
	}
}

/* Makes the home directory in the new sandbox. */
static int make_home(struct tb_k8s *inst, const char *name, const char *uid,
                     const char *pod, char *errbuf, size_t errlen)
{
	struct tb_k8s_conn c;
	struct taskbox_exec_result res;
	const char *argv[] = {"mkdir", "-p", inst->workdir, NULL};
	int rc;

	memset(&c, 0, sizeof c);
	c.inst = inst;
	snprintf(c.name, sizeof c.name, "%s", name);
	snprintf(c.uid, sizeof c.uid, "%s", uid);
	snprintf(c.pod, sizeof c.pod, "%s", pod);
	memset(&res, 0, sizeof res);
	res.struct_size = sizeof res;
	rc = tb_k8s_exec_plain(&c, argv, NULL, 0, 30000, 4096, &res, errbuf,
	                       errlen);
	if (rc == TASKBOX_OK && res.exit_code != 0)
		rc = tb_k8s_fail(
		    errbuf, errlen, TASKBOX_E_INVALID,
		    "cannot make the home %s in the sandbox (exit "
		    "%d: %.*s): set settings.workdir to a directory "
		    "the image's user may create",
		    inst->workdir, res.exit_code,
		    (int)(res.err.len > 200 ? 200 : res.err.len),
		    res.err.data ? (char *)res.err.data : "");
	inst->host->free(res.out.data);
	inst->host->free(res.err.data);
	return rc;
}

int tb_k8s_create(struct tb_k8s *inst, const struct tb_k8s_template *t,
                  uint32_t lifetime_s, const char *owner, char *id,
                  char *errbuf, size_t errlen)
{
	unsigned char rnd[8];
	char hex[17], name[64], path[512], uid[64], pod[254], ignored[64];
	struct tb_k8s_resp resp;
	json_t *obj, *made;
	char *body;
	const char *u;
	int rc, i;

	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INTERNAL,
		                   "no random bytes for a name");
	for (i = 0; i < 8; i++)
		sprintf(hex + 2 * i, "%02x", rnd[i]);
	snprintf(name, sizeof name, "tb-%s", hex);
	obj = tb_k8s_object_new(inst, t, name, hex,
	                        time(NULL) + (time_t)lifetime_s, owner);
	body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	json_decref(obj);
	if (!body)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	tb_k8s_object_path(inst, inst->kind, NULL, path, sizeof path);
	rc = tb_k8s_rest(inst, "POST", path, body, NULL, &resp, errbuf, errlen);
	free(body);
	if (rc != TASKBOX_OK)
		return rc;
	if (resp.status != 201 && resp.status != 200) {
		char what[128];
		snprintf(what, sizeof what, "create %s",
		         inst->kind == TB_K8S_POD ? "pod" : "Sandbox");
		if (resp.status == 404 && inst->kind == TB_K8S_SANDBOX)
			rc = tb_k8s_fail(
			    errbuf, errlen, TASKBOX_E_UNSUPPORTED,
			    "create Sandbox: HTTP 404: the cluster "
			    "does not serve agents.x-k8s.io/v1beta1 "
			    "(is agent-sandbox installed?)");
		else
			rc = tb_k8s_rest_fail(&resp, what, errbuf, errlen);
		tb_k8s_resp_free(&resp);
		return rc;
	}
	made = json_loadb(resp.body, resp.len, 0, NULL);
	tb_k8s_resp_free(&resp);
	u = meta_str(made, "uid");
	if (!u || strlen(u) >= sizeof uid) {
		json_decref(made);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                   "create: the apiserver's answer has no UID");
	}
	snprintf(uid, sizeof uid, "%s", u);
	json_decref(made);
	rc = wait_ready(inst, name, pod, sizeof pod, errbuf, errlen);
	if (rc == TASKBOX_OK)
		rc = make_home(inst, name, uid, pod, errbuf, errlen);
	if (rc != TASKBOX_OK) {
		delete_object(inst, name, uid, ignored, sizeof ignored);
		return rc;
	}
	snprintf(id, TASKBOX_SANDBOX_ID_MAX, "%s.%s", name, uid);
	return TASKBOX_OK;
}

/* What connect checks on the object it got: ours, the same, alive. */
static int judge(struct tb_k8s_conn *c, json_t *obj, char *errbuf,
                 size_t errlen)
{
	struct tb_k8s *inst = c->inst;
	const char *by = label(obj, TB_K8S_MANAGED_BY);
	const char *uid = meta_str(obj, "uid");
	const char *exp = annotation(obj, TB_K8S_EXPIRES_AT);
	char why[400] = "";
	time_t when;

	if (!by || strcmp(by, "taskbox") != 0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                   "%s is not a sandbox of taskbox (no "
		                   "label " TB_K8S_MANAGED_BY "=taskbox)",
		                   c->name);
	if (!uid || strcmp(uid, c->uid) != 0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_GONE,
		                   "sandbox %s was deleted and another object "
		                   "now has its name",
		                   c->id);
	if (meta_str(obj, "deletionTimestamp"))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_GONE,
		                   "sandbox %s is being deleted", c->id);
	if (inst->kind == TB_K8S_POD && exp &&
	    (when = tb_k8s_parse_rfc3339(exp)) != -1 && when < time(NULL))
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_GONE,
		                   "sandbox %s expired at %s", c->id, exp);
	if (readiness(inst, obj, why, sizeof why) == -TASKBOX_E_GONE)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_GONE,
		                   "sandbox %s is gone: %s", c->id, why);
	if (inst->kind == TB_K8S_SANDBOX)
		sandbox_pod_name(obj, c->pod, sizeof c->pod);
	else
		snprintf(c->pod, sizeof c->pod, "%s", c->name);
	if (tb_k8s_object_meta(obj, c->owner, sizeof c->owner, &c->created,
	                       &c->expires) != 0)
		return tb_k8s_fail(
		    errbuf, errlen, TASKBOX_E_PROTOCOL,
		    "sandbox %s: its annotation " TB_K8S_OWNER_ANN
		    " is not a valid owner",
		    c->id);
	return TASKBOX_OK;
}

/* A Sandbox its owner suspended (spec.operatingMode Suspended). */
static int suspended(json_t *sb)
{
	const char *mode = jstr(json_object_get(sb, "spec"), "operatingMode");

	return mode && strcmp(mode, "Suspended") == 0;
}

/* Resumes a suspended Sandbox (its controller makes its pod again) and
 * waits until it runs; the home is made again by the next exec. */
static int resume(struct tb_k8s_conn *c, char *errbuf, size_t errlen)
{
	struct tb_k8s *inst = c->inst;
	char path[512], pod[254];
	struct tb_k8s_resp resp;
	int rc;

	tb_k8s_object_path(inst, TB_K8S_SANDBOX, c->name, path, sizeof path);
	rc = tb_k8s_rest(inst, "PATCH", path,
	                 "{\"spec\":{\"operatingMode\":\"Running\"}}",
	                 MERGE_PATCH, &resp, errbuf, errlen);
	if (rc != TASKBOX_OK)
		return rc;
	if (resp.status != 200)
		rc = resp.status == 404
		         ? tb_k8s_fail(errbuf, errlen, TASKBOX_E_GONE,
		                       "sandbox %s is gone", c->id)
		         : tb_k8s_rest_fail(&resp, "resume", errbuf, errlen);
	tb_k8s_resp_free(&resp);
	if (rc == TASKBOX_OK)
		rc = wait_ready(inst, c->name, pod, sizeof pod, errbuf, errlen);
	return rc;
}

int tb_k8s_connect_conn(struct tb_k8s *inst, const char *id,
                        struct tb_k8s_conn *c, char *errbuf, size_t errlen)
{
	char path[512];
	json_t *obj;
	int rc;

	c->inst = inst;
	if (strlen(id) >= sizeof c->id ||
	    tb_k8s_split_id(id, c->name, sizeof c->name, c->uid,
	                    sizeof c->uid) != 0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                   "no sandbox %.64s: a k8s sandbox id is "
		                   "NAME.UID",
		                   id);
	snprintf(c->id, sizeof c->id, "%s", id);
	if (tb_k8s_cache_get(inst->cache, id, c))
		return TASKBOX_OK;
	tb_k8s_object_path(inst, inst->kind, c->name, path, sizeof path);
	rc = get_object(inst, path, &obj, "connect", errbuf, errlen);
	if (rc == TASKBOX_E_NOT_FOUND)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                   "no sandbox %s in namespace %s", id,
		                   inst->namespace);
	if (rc != TASKBOX_OK)
		return rc;
	if (inst->kind == TB_K8S_SANDBOX && suspended(obj)) {
		json_decref(obj);
		rc = resume(c, errbuf, errlen);
		if (rc != TASKBOX_OK)
			return rc;
		rc = get_object(inst, path, &obj, "connect", errbuf, errlen);
		if (rc != TASKBOX_OK)
			return rc == TASKBOX_E_NOT_FOUND ? TASKBOX_E_GONE : rc;
	}
	rc = judge(c, obj, errbuf, errlen);
	json_decref(obj);
	if (rc == TASKBOX_OK)
		tb_k8s_cache_put(inst->cache, c);
	return rc;
}

int tb_k8s_destroy(struct tb_k8s *inst, const char *id, char *errbuf,
                   size_t errlen)
{
	struct tb_k8s_conn c;
	char path[512];
	json_t *obj;
	int rc;

	memset(&c, 0, sizeof c);
	c.inst = inst;
	tb_k8s_cache_drop(inst->cache, id);
	if (strlen(id) >= sizeof c.id ||
	    tb_k8s_split_id(id, c.name, sizeof c.name, c.uid, sizeof c.uid) !=
	        0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                   "no sandbox %.64s", id);
	snprintf(c.id, sizeof c.id, "%s", id);
	tb_k8s_object_path(inst, inst->kind, c.name, path, sizeof path);
	rc = get_object(inst, path, &obj, "destroy", errbuf, errlen);
	if (rc == TASKBOX_E_NOT_FOUND)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                   "sandbox %s does not exist (any more)", id);
	if (rc != TASKBOX_OK)
		return rc;
	if (!meta_str(obj, "uid") || strcmp(meta_str(obj, "uid"), c.uid) ||
	    meta_str(obj, "deletionTimestamp")) {
		json_decref(obj);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                   "sandbox %s does not exist (any more)", id);
	}
	json_decref(obj);
	rc = delete_object(inst, c.name, c.uid, errbuf, errlen);
	tb_k8s_cache_drop(inst->cache, id);
	return rc;
}

/* The patched object the apiserver sent back: a renewed sandbox that has
 * ended (evicted, expired) is GONE all the same. */
static int renewed_alive(struct tb_k8s_conn *c, const struct tb_k8s_resp *resp,
                         char *errbuf, size_t errlen)
{
	json_t *obj = json_loadb(resp->body, resp->len, 0, NULL);
	int rc = TASKBOX_OK;

	if (json_is_object(obj))
		rc = judge(c, obj, errbuf, errlen);
	json_decref(obj);
	if (rc == TASKBOX_E_GONE)
		tb_k8s_cache_drop(c->inst->cache, c->id);
	else if (rc == TASKBOX_OK) /* the new expiry, for describe */
		tb_k8s_cache_put(c->inst->cache, c);
	return rc == TASKBOX_E_GONE ? rc : TASKBOX_OK;
}

int tb_k8s_renew(struct tb_k8s_conn *c, uint32_t lifetime_s, char *errbuf,
                 size_t errlen)
{
	struct tb_k8s *inst = c->inst;
	time_t want = time(NULL) + (time_t)lifetime_s, cap;
	char when[40], body[512], path[512];
	struct tb_k8s_resp resp;
	int capped = 0, rc;

	if (c->created <= 0) {
		/* Learnt from the cache: ask once for the creation time. */
		json_t *obj;
		tb_k8s_object_path(inst, inst->kind, c->name, path,
		                   sizeof path);
		rc = get_object(inst, path, &obj, "renew", errbuf, errlen);
		if (rc == TASKBOX_E_NOT_FOUND)
			rc = TASKBOX_E_GONE;
		if (rc != TASKBOX_OK)
			return rc;
		c->created =
		    tb_k8s_parse_rfc3339(meta_str(obj, "creationTimestamp"));
		json_decref(obj);
	}
	cap = c->created > 0 ? c->created + (time_t)inst->max_lifetime_s : 0;
	if (cap && want > cap) {
		want = cap;
		capped = 1;
	}
	tb_k8s_rfc3339(want, when, sizeof when);
	if (inst->kind == TB_K8S_POD)
		snprintf(body, sizeof body,
		         "{\"metadata\":{\"uid\":\"%s\",\"annotations\":{"
		         "\"" TB_K8S_EXPIRES_AT "\":\"%s\"}}}",
		         c->uid, when);
	else
		snprintf(body, sizeof body,
		         "{\"metadata\":{\"uid\":\"%s\",\"annotations\":{"
		         "\"" TB_K8S_EXPIRES_AT "\":\"%s\"}},"
		         "\"spec\":{\"shutdownTime\":\"%s\"}}",
		         c->uid, when, when);
	tb_k8s_object_path(inst, inst->kind, c->name, path, sizeof path);
	rc = tb_k8s_rest(inst, "PATCH", path, body, MERGE_PATCH, &resp, errbuf,
	                 errlen);
	if (rc != TASKBOX_OK)
		return rc;
	if (resp.status == 404 || resp.status == 409)
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_GONE,
		                 "renew: sandbox %s is gone", c->id);
	else if (resp.status != 200)
		rc = tb_k8s_rest_fail(&resp, "renew", errbuf, errlen);
	else if ((rc = renewed_alive(c, &resp, errbuf, errlen)) != TASKBOX_OK)
		;
	else if (capped)
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                 "renew: sandbox %s lives until %s at most "
		                 "(settings.max_lifetime, the pod's "
		                 "activeDeadlineSeconds)",
		                 c->id, when);
	tb_k8s_resp_free(&resp);
	return rc;
}

int tb_k8s_check_gone(struct tb_k8s_conn *c, int rc, char *errbuf,
                      size_t errlen)
{
	struct tb_k8s *inst = c->inst;
	char path[512], err[256];
	json_t *obj;
	int grc;

	tb_k8s_object_path(inst, inst->kind, c->name, path, sizeof path);
	grc = get_object(inst, path, &obj, "check", err, sizeof err);
	if (grc == TASKBOX_E_NOT_FOUND) {
		tb_k8s_cache_drop(inst->cache, c->id);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_GONE,
		                   "sandbox %s was deleted", c->id);
	}
	if (grc != TASKBOX_OK)
		return rc;
	grc = judge(c, obj, err, sizeof err);
	json_decref(obj);
	if (grc == TASKBOX_E_GONE || grc == TASKBOX_E_NOT_FOUND) {
		tb_k8s_cache_drop(inst->cache, c->id);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_GONE, "%s", err);
	}
	if (inst->kind == TB_K8S_SANDBOX) {
		/* The Sandbox is there: is its pod? */
		tb_k8s_object_path(inst, TB_K8S_POD, c->pod, path, sizeof path);
		grc =
		    get_object(inst, path, &obj, "check pod", err, sizeof err);
		if (grc == TASKBOX_E_NOT_FOUND) {
			tb_k8s_cache_drop(inst->cache, c->id);
			return tb_k8s_fail(
			    errbuf, errlen, TASKBOX_E_GONE,
			    "the pod %s of sandbox %s was deleted", c->pod,
			    c->id);
		}
		if (grc == TASKBOX_OK &&
		    tb_k8s_pod_readiness(obj, err, sizeof err) ==
		        -TASKBOX_E_GONE) {
			json_decref(obj);
			tb_k8s_cache_drop(inst->cache, c->id);
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_GONE,
			                   "sandbox %s: %s", c->id, err);
		}
		json_decref(obj);
	}
	return rc;
}
