/* The objects the provider makes (a Pod, or an agent-sandbox Sandbox around
 * the same pod template), their API paths, what their status says about
 * starting, times in RFC 3339, and the "NAME.UID" sandbox ids. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_int.h"

#define SANDBOX_API "/apis/agents.x-k8s.io/v1beta1"
/* Keeps the container alive, exits at once on SIGTERM and reaps orphans. */
#define KEEPALIVE "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"

void tb_k8s_rfc3339(time_t t, char *out, size_t outlen)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

time_t tb_k8s_parse_rfc3339(const char *s)
{
	struct tm tm;
	int n = 0;

	if (!s)
		return -1;
	memset(&tm, 0, sizeof tm);
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
	           &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return -1;
	s += n;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	if (strcmp(s, "Z") != 0 && strcmp(s, "+00:00") != 0)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return timegm(&tm);
}

int tb_k8s_split_id(const char *id, char *name, size_t namelen, char *uid,
                    size_t uidlen)
{
	const char *dot = strchr(id, '.');
	size_t n, i;

	if (!dot || strchr(dot + 1, '.'))
		return -1;
	n = (size_t)(dot - id);
	if (n == 0 || n >= namelen || n > 63 || strlen(dot + 1) == 0 ||
	    strlen(dot + 1) >= uidlen)
		return -1;
	for (i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') ||
		      (id[i] >= '0' && id[i] <= '9') || id[i] == '-'))
			return -1;
	for (i = 0; dot[1 + i]; i++) {
		char ch = dot[1 + i];
		if (!((ch >= 'a' && ch <= 'f') || (ch >= '0' && ch <= '9') ||
		      ch == '-'))
			return -1;
	}
	memcpy(name, id, n);
	name[n] = '\0';
	strcpy(uid, dot + 1);
	return 0;
}

void tb_k8s_object_path(const struct tb_k8s *inst, enum tb_k8s_kind kind,
                        const char *name, char *out, size_t outlen)
{
	if (kind == TB_K8S_SANDBOX)
		snprintf(out, outlen,
		         SANDBOX_API "/namespaces/%s/sandboxes%s%s",
		         inst->namespace, name ? "/" : "", name ? name : "");
	else
		snprintf(out, outlen, "/api/v1/namespaces/%s/pods%s%s",
		         inst->namespace, name ? "/" : "", name ? name : "");
}

static const char *jstr(json_t *o, const char *k);

static json_t *labels_for(const struct tb_k8s_template *t, const char *hexid)
{
	json_t *l = json_object();
	const char *k;
	json_t *v;

	if (t->labels)
		json_object_foreach(t->labels, k, v) json_object_set(l, k, v);
	json_object_set_new(l, TB_K8S_MANAGED_BY, json_string("taskbox"));
	json_object_set_new(l, "taskbox.dev/id", json_string(hexid));
	json_object_set_new(l, "taskbox.dev/template", json_string(t->name));
	return l;
}

static json_t *pod_spec(const struct tb_k8s *inst,
                        const struct tb_k8s_template *t)
{
	json_t *ctr = json_pack("{ss ss s[sss] s{sb sb}}", "name",
	                        TB_K8S_CONTAINER, "image", t->image, "command",
	                        "/bin/sh", "-c", KEEPALIVE, "securityContext",
	                        "allowPrivilegeEscalation", 0, "privileged", 0);
	json_t *spec = json_pack(
	    "{ss si sI sb sb s[o]}", "restartPolicy", "Never",
	    "terminationGracePeriodSeconds", 1, "activeDeadlineSeconds",
	    (json_int_t)inst->max_lifetime_s, "automountServiceAccountToken",
	    t->automount_token, "enableServiceLinks", 0, "containers", ctr);

	if (!spec)
		return NULL;
	if (t->resources)
		json_object_set(ctr, "resources", t->resources);
	if (inst->env && json_array_size(inst->env))
		json_object_set(ctr, "env", inst->env);
	if (t->runtime_class)
		json_object_set_new(spec, "runtimeClassName",
		                    json_string(t->runtime_class));
	if (t->node_selector)
		json_object_set(spec, "nodeSelector", t->node_selector);
	if (t->tolerations)
		json_object_set(spec, "tolerations", t->tolerations);
	if (t->service_account)
		json_object_set_new(spec, "serviceAccountName",
		                    json_string(t->service_account));
	return spec;
}

int tb_k8s_owner_valid(const char *owner)
{
	size_t n = strlen(owner), i;
	const unsigned char *u = (const unsigned char *)owner;
	json_t *s;

	if (n == 0 || n >= TASKBOX_OWNER_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (u[i] < 0x20 || u[i] == 0x7f ||
		    (u[i] == 0xc2 && i + 1 < n && u[i + 1] >= 0x80 &&
		     u[i + 1] <= 0x9f)) /* C0, DEL and C1 controls */
			return 0;
	s = json_stringn(owner, n); /* NULL when not valid UTF-8 */
	json_decref(s);
	return s != NULL;
}

/* FNV-1a is no security hash: the label only narrows a LIST on the
 * apiserver, and every object it returns is checked against the owner
 * annotation exactly. */
void tb_k8s_owner_hash(const char *owner, char *out)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	const unsigned char *u;

	for (u = (const unsigned char *)owner; *u; u++) {
		h ^= *u;
		h *= UINT64_C(0x100000001b3);
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int tb_k8s_object_meta(json_t *obj, char *owner, size_t ownerlen,
                       time_t *created, time_t *expires)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *ann = json_object_get(meta, "annotations");
	const char *o = jstr(ann, TB_K8S_OWNER_ANN);
	const char *exp = jstr(ann, TB_K8S_EXPIRES_AT);
	time_t t;

	if (!exp) /* a Sandbox made without the annotation */
		exp = jstr(json_object_get(obj, "spec"), "shutdownTime");
	t = tb_k8s_parse_rfc3339(jstr(meta, "creationTimestamp"));
	*created = t > 0 ? t : 0;
	t = tb_k8s_parse_rfc3339(exp);
	*expires = t > 0 ? t : 0;
	owner[0] = '\0';
	if (!o || !*o)
		return 0;
	if (!tb_k8s_owner_valid(o) || strlen(o) >= ownerlen)
		return -1;
	memcpy(owner, o, strlen(o) + 1);
	return 0;
}

json_t *tb_k8s_object_new(const struct tb_k8s *inst,
                          const struct tb_k8s_template *t, const char *name,
                          const char *hexid, time_t expires_at,
                          const char *owner)
{
	char when[40], hash[17];
	json_t *meta, *spec = pod_spec(inst, t);

	tb_k8s_rfc3339(expires_at, when, sizeof when);
	meta = json_pack("{ss so s{ss}}", "name", name, "labels",
	                 labels_for(t, hexid), "annotations", TB_K8S_EXPIRES_AT,
	                 when);
	if (meta && owner && *owner) {
		tb_k8s_owner_hash(owner, hash);
		if (json_object_set_new(json_object_get(meta, "labels"),
		                        TB_K8S_OWNER_LABEL,
		                        json_string(hash)) ||
		    json_object_set_new(json_object_get(meta, "annotations"),
		                        TB_K8S_OWNER_ANN, json_string(owner))) {
			json_decref(meta);
			meta = NULL;
		}
	}
	if (!spec || !meta) {
		json_decref(spec);
		json_decref(meta);
		return NULL;
	}
	if (inst->kind == TB_K8S_POD)
		return json_pack("{ss ss so so}", "apiVersion", "v1", "kind",
		                 "Pod", "metadata", meta, "spec", spec);
	return json_pack("{ss ss so s{s{s{so} so} ss ss}}", "apiVersion",
	                 "agents.x-k8s.io/v1beta1", "kind", "Sandbox",
	                 "metadata", meta, "spec", "podTemplate", "metadata",
	                 "labels", labels_for(t, hexid), "spec", spec,
	                 "shutdownTime", when, "shutdownPolicy", "Delete");
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* The condition of type in status.conditions, or NULL. */
static json_t *condition(json_t *obj, const char *type)
{
	json_t *c;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
	{
		const char *t = jstr(c, "type");
		if (t && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

int tb_k8s_pod_readiness(json_t *pod, char *why, size_t whylen)
{
	json_t *st = json_object_get(pod, "status"), *cs, *ready, *sched;
	const char *phase = jstr(st, "phase");
	size_t i;

	if (phase &&
	    (strcmp(phase, "Failed") == 0 || strcmp(phase, "Succeeded") == 0)) {
		snprintf(why, whylen, "the pod ended (phase %s%s%s)", phase,
		         jstr(st, "reason") ? ", reason " : "",
		         jstr(st, "reason") ? jstr(st, "reason") : "");
		return -TASKBOX_E_GONE;
	}
	json_array_foreach(json_object_get(st, "containerStatuses"), i, cs)
	{
		json_t *waiting =
		    json_object_get(json_object_get(cs, "state"), "waiting");
		const char *reason = jstr(waiting, "reason");
		const char *msg = jstr(waiting, "message");
		if (!reason)
			continue;
		if (strcmp(reason, "ErrImagePull") == 0 ||
		    strcmp(reason, "ImagePullBackOff") == 0 ||
		    strcmp(reason, "InvalidImageName") == 0 ||
		    strcmp(reason, "ErrImageNeverPull") == 0) {
			snprintf(why, whylen,
			         "the image cannot be pulled: %s%s%s", reason,
			         msg ? ": " : "", msg ? msg : "");
			return -TASKBOX_E_NOT_FOUND;
		}
		if (strcmp(reason, "CreateContainerConfigError") == 0 ||
		    strcmp(reason, "CreateContainerError") == 0 ||
		    strcmp(reason, "RunContainerError") == 0) {
			snprintf(why, whylen,
			         "the container cannot start: %s%s%s", reason,
			         msg ? ": " : "", msg ? msg : "");
			return -TASKBOX_E_INVALID;
		}
	}
	sched = condition(pod, "PodScheduled");
	if (sched && jstr(sched, "status") &&
	    strcmp(jstr(sched, "status"), "False") == 0 &&
	    jstr(sched, "reason") &&
	    strcmp(jstr(sched, "reason"), "Unschedulable") == 0) {
		snprintf(why, whylen, "the pod cannot be scheduled: %s",
		         jstr(sched, "message") ? jstr(sched, "message")
		                                : "Unschedulable");
		return -TASKBOX_E_UNAVAILABLE;
	}
	if (!phase || strcmp(phase, "Running") != 0)
		return 0;
	ready = condition(pod, "Ready");
	if (ready)
		return jstr(ready, "status") &&
		       strcmp(jstr(ready, "status"), "True") == 0;
	/* No conditions: every container ready will do. */
	cs = json_object_get(st, "containerStatuses");
	if (!json_array_size(cs))
		return 0;
	json_array_foreach(cs, i, ready) if (!json_is_true(json_object_get(
	                                         ready, "ready"))) return 0;
	return 1;
}

int tb_k8s_sandbox_readiness(json_t *sb, char *why, size_t whylen)
{
	json_t *ready = condition(sb, "Ready");
	const char *status = jstr(ready, "status");
	const char *reason = jstr(ready, "reason");

	if (status && strcmp(status, "True") == 0)
		return 1;
	if (reason && (strcmp(reason, "SandboxExpired") == 0 ||
	               strcmp(reason, "PodFailed") == 0 ||
	               strcmp(reason, "PodSucceeded") == 0)) {
		snprintf(why, whylen, "the Sandbox is not ready: %s%s%s",
		         reason, jstr(ready, "message") ? ": " : "",
		         jstr(ready, "message") ? jstr(ready, "message") : "");
		return -TASKBOX_E_GONE;
	}
	return 0;
}
