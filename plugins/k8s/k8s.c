/* The k8s provider: sandboxes are Pods (or agent-sandbox Sandboxes) in a
 * Kubernetes namespace, commands run through pods/exec over WebSocket. This
 * file holds the descriptor and the op table; settings are in settings.c,
 * the objects in pods.c, exec in exec.c and ws.c, files in files.c and
 * batch.c, describe and list in list.c. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_int.h"

#define HAS(p, type, field)                                                    \
	((p)->struct_size >= offsetof(type, field) + sizeof((p)->field))

static void instance_free(struct tb_k8s *inst)
{
	if (!inst)
		return;
	tb_k8s_reaper_stop(inst);
	tb_k8s_settings_free(inst);
	tb_k8s_cache_free(inst->cache);
	tb_k8s_pool_free(inst);
	pthread_mutex_destroy(&inst->cl.token_lock);
	pthread_mutex_destroy(&inst->gate_lock);
	pthread_cond_destroy(&inst->gate_cond);
	pthread_mutex_destroy(&inst->pool_lock);
	pthread_mutex_destroy(&inst->reaper_lock);
	pthread_cond_destroy(&inst->reaper_cond);
	free(inst);
}

static int k8s_init(const struct taskbox_host *host, const char *settings_json,
                    void **instance, char *errbuf, size_t errlen)
{
	struct tb_k8s *inst;
	int rc;

	*instance = NULL;
	inst = calloc(1, sizeof *inst);
	if (!inst)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	inst->host = host;
	pthread_mutex_init(&inst->cl.token_lock, NULL);
	pthread_mutex_init(&inst->gate_lock, NULL);
	pthread_cond_init(&inst->gate_cond, NULL);
	pthread_mutex_init(&inst->pool_lock, NULL);
	pthread_mutex_init(&inst->reaper_lock, NULL);
	pthread_cond_init(&inst->reaper_cond, NULL);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		free(inst);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INTERNAL,
		                   "libcurl failed to start");
	}
	rc = tb_k8s_settings(inst, settings_json, errbuf, errlen);
	if (rc == TASKBOX_OK &&
	    !(inst->cache = tb_k8s_cache_new(inst->connection_reuse_s)))
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                 "out of memory");
	/* The first sweep also proves the apiserver answers and lets us
	 * list pods; kind sandbox lists its pods' namespace as well. */
	if (rc == TASKBOX_OK)
		rc = tb_k8s_reap_once(inst, errbuf, errlen);
	if (rc == TASKBOX_OK && inst->kind == TB_K8S_SANDBOX)
		rc = tb_k8s_list_probe(inst, errbuf, errlen);
	if (rc == TASKBOX_OK && tb_k8s_reaper_start(inst) != 0)
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_INTERNAL,
		                 "cannot start the reaper thread");
	if (rc != TASKBOX_OK) {
		instance_free(inst);
		curl_global_cleanup();
		return rc;
	}
	*instance = inst;
	return TASKBOX_OK;
}

static void k8s_fini(void *instance)
{
	instance_free(instance);
	curl_global_cleanup();
}

static int k8s_create(void *instance, const struct taskbox_create_req *req,
                      char *id, char *errbuf, size_t errlen)
{
	struct tb_k8s *inst = instance;
	const struct tb_k8s_template *t =
	    &inst->templates[inst->default_template];
	uint32_t life = inst->default_lifetime_s;
	const char *owner = NULL;
	size_t i;

	if (req && HAS(req, struct taskbox_create_req, template_name) &&
	    req->template_name) {
		t = NULL;
		for (i = 0; i < inst->ntemplates; i++)
			if (strcmp(inst->templates[i].name,
			           req->template_name) == 0)
				t = &inst->templates[i];
		if (!t)
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
			                   "no template \"%.64s\" (see "
			                   "settings.templates)",
			                   req->template_name);
	}
	if (req && HAS(req, struct taskbox_create_req, lifetime_s) &&
	    req->lifetime_s) {
		if (req->lifetime_s > inst->max_lifetime_s)
			return tb_k8s_fail(
			    errbuf, errlen, TASKBOX_E_INVALID,
			    "create: lifetime must be at most %u s "
			    "(settings.max_lifetime)",
			    (unsigned)inst->max_lifetime_s);
		life = req->lifetime_s;
	}
	if (req && HAS(req, struct taskbox_create_req, owner) && req->owner &&
	    req->owner[0]) {
		if (!tb_k8s_owner_valid(req->owner))
			return tb_k8s_fail(
			    errbuf, errlen, TASKBOX_E_INVALID,
			    "create: owner must be 1..255 bytes "
			    "of UTF-8 without control characters");
		owner = req->owner;
	}
	id[0] = '\0';
	return tb_k8s_create(inst, t, life, owner, id, errbuf, errlen);
}

static int k8s_connect(void *instance, const char *sandbox_id, void **conn,
                       char *errbuf, size_t errlen)
{
	struct tb_k8s_conn *c = calloc(1, sizeof *c);
	int rc;

	*conn = NULL;
	if (!c)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	rc = tb_k8s_connect_conn(instance, sandbox_id, c, errbuf, errlen);
	if (rc != TASKBOX_OK) {
		free(c);
		return rc;
	}
	*conn = c;
	return TASKBOX_OK;
}

static void k8s_close(void *conn)
{
	free(conn);
}

static int k8s_exec(void *conn, const struct taskbox_exec_req *req,
                    struct taskbox_exec_result *res, char *errbuf,
                    size_t errlen)
{
	return tb_k8s_exec(conn, req, res, errbuf, errlen);
}

static int k8s_read_file(void *conn, const char *path, uint64_t offset,
                         size_t length, struct taskbox_buf *data,
                         uint64_t *file_size, char *errbuf, size_t errlen)
{
	return tb_k8s_read_file(conn, path, offset, length, data, file_size,
	                        errbuf, errlen);
}

static int k8s_write_file(void *conn, const char *path,
                          const unsigned char *data, size_t len, uint32_t mode,
                          char *errbuf, size_t errlen)
{
	return tb_k8s_write_file(conn, path, data, len, mode, errbuf, errlen);
}

static int k8s_read_files(void *conn, struct taskbox_read_item *const *items,
                          size_t count, char *errbuf, size_t errlen)
{
	return tb_k8s_read_files(conn, items, count, errbuf, errlen);
}

static int k8s_destroy(void *instance, const char *sandbox_id, char *errbuf,
                       size_t errlen)
{
	return tb_k8s_destroy(instance, sandbox_id, errbuf, errlen);
}

static int k8s_renew(void *conn, uint32_t lifetime_s, char *errbuf,
                     size_t errlen)
{
	struct tb_k8s_conn *c = conn;

	if (lifetime_s == 0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "renew: lifetime must be at least 1 s");
	return tb_k8s_renew(c, lifetime_s, errbuf, errlen);
}

static int k8s_describe(void *conn, struct taskbox_sandbox_info *info,
                        char *errbuf, size_t errlen)
{
	return tb_k8s_describe(conn, info, errbuf, errlen);
}

static int k8s_list(void *instance, const char *owner, taskbox_list_fn each,
                    void *arg, char *errbuf, size_t errlen)
{
	return tb_k8s_list(instance, owner, each, arg, errbuf, errlen);
}

static const struct taskbox_provider k8s_provider = {
    .abi_major = TASKBOX_ABI_MAJOR,
    .abi_minor = TASKBOX_ABI_MINOR,
    .struct_size = sizeof(struct taskbox_provider),
    .name = TB_K8S_NAME,
    .version = PACKAGE_VERSION,
    .description = "sandboxes as Kubernetes Pods or agent-sandbox "
                   "Sandboxes, commands over pods/exec",
    .ops =
        {
            .init = k8s_init,
            .fini = k8s_fini,
            .create = k8s_create,
            .connect = k8s_connect,
            .close = k8s_close,
            .exec = k8s_exec,
            .read_file = k8s_read_file,
            .destroy = k8s_destroy,
            .write_file = k8s_write_file,
            .renew = k8s_renew,
        },
    .read_files = k8s_read_files,
    .describe = k8s_describe,
    .list = k8s_list,
};

TASKBOX_PROVIDER_DEFINE(k8s_provider)
