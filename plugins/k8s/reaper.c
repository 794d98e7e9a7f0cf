/* The reaper of expired pods (kind pod): a Pod cannot have its
 * activeDeadlineSeconds raised, so a renewable lifetime lives in the
 * annotation taskbox.dev/expires-at (RFC 3339), and this deletes the pods
 * of taskbox in the namespace whose time passed: once at init, then every
 * settings.reap_interval seconds on a thread of its own. Any taskbox
 * replica may reap any sandbox: the expiry is absolute. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_int.h"

int tb_k8s_reap_once(struct tb_k8s *inst, char *errbuf, size_t errlen)
{
	char path[512], del[600], err[256], msg[400];
	struct tb_k8s_resp resp;
	json_t *list, *item;
	time_t now = time(NULL);
	size_t i;
	int rc;

	tb_k8s_object_path(inst, TB_K8S_POD, NULL, path, sizeof path);
	strncat(path, "?labelSelector=" TB_K8S_MANAGED_BY "%3Dtaskbox",
	        sizeof path - strlen(path) - 1);
	rc = tb_k8s_rest(inst, "GET", path, NULL, NULL, &resp, errbuf, errlen);
	if (rc != TASKBOX_OK)
		return rc;
	if (resp.status != 200) {
		rc = tb_k8s_rest_fail(&resp, "list pods", errbuf, errlen);
		tb_k8s_resp_free(&resp);
		return rc;
	}
	list = json_loadb(resp.body, resp.len, 0, NULL);
	tb_k8s_resp_free(&resp);
	json_array_foreach(json_object_get(list, "items"), i, item)
	{
		json_t *meta = json_object_get(item, "metadata");
		const char *name =
		    json_string_value(json_object_get(meta, "name"));
		const char *exp = json_string_value(json_object_get(
		    json_object_get(meta, "annotations"), TB_K8S_EXPIRES_AT));
		time_t when = tb_k8s_parse_rfc3339(exp);
		struct tb_k8s_resp d;

		if (!name || when == -1 || when > now ||
		    json_object_get(meta, "deletionTimestamp"))
			continue;
		if (json_array_size(json_object_get(meta, "ownerReferences")))
			continue; /* a Sandbox's pod: its controller's */
		tb_k8s_object_path(inst, TB_K8S_POD, name, del, sizeof del);
		if (tb_k8s_rest(inst, "DELETE", del, NULL, NULL, &d, err,
		                sizeof err) == TASKBOX_OK) {
			snprintf(msg, sizeof msg,
			         "reaped pod %s: it expired at %s (HTTP %ld)",
			         name, exp, d.status);
			inst->host->log(TASKBOX_LOG_INFO, TB_K8S_NAME, msg);
			tb_k8s_resp_free(&d);
		}
	}
	json_decref(list);
	return TASKBOX_OK;
}

static void *reaper_main(void *arg)
{
	struct tb_k8s *inst = arg;
	char err[TASKBOX_ERRBUF_SIZE];

	pthread_mutex_lock(&inst->reaper_lock);
	while (!inst->stopping) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += inst->reap_interval_s;
		pthread_cond_timedwait(&inst->reaper_cond, &inst->reaper_lock,
		                       &until);
		if (inst->stopping)
			break;
		pthread_mutex_unlock(&inst->reaper_lock);
		if (tb_k8s_reap_once(inst, err, sizeof err) != TASKBOX_OK)
			inst->host->log(TASKBOX_LOG_WARN, TB_K8S_NAME, err);
		pthread_mutex_lock(&inst->reaper_lock);
	}
	pthread_mutex_unlock(&inst->reaper_lock);
	return NULL;
}

int tb_k8s_reaper_start(struct tb_k8s *inst)
{
	if (inst->kind != TB_K8S_POD || inst->reap_interval_s == 0)
		return 0;
	if (pthread_create(&inst->reaper, NULL, reaper_main, inst) != 0)
		return -1;
	inst->reaper_started = 1;
	return 0;
}

void tb_k8s_reaper_stop(struct tb_k8s *inst)
{
	if (!inst->reaper_started)
		return;
	pthread_mutex_lock(&inst->reaper_lock);
	inst->stopping = 1;
	pthread_cond_signal(&inst->reaper_cond);
	pthread_mutex_unlock(&inst->reaper_lock);
	pthread_join(inst->reaper, NULL);
	inst->reaper_started = 0;
}
