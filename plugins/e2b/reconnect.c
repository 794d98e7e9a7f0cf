/* Connecting with the cache of what connect learnt, and the one retry of an
 * envd op whose connection turned out stale: envd (or the sandbox proxy in
 * front of it) answered 502 (the sandbox is paused, expired or gone) or 401
 * (the access token was rejected) before doing anything, so the op had no
 * effect and may run again once connect has been asked anew. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b_int.h"

int tb_e2b_conn_open(struct tb_e2b *inst, const char *id,
                     struct tb_e2b_conn *conn, char *errbuf, size_t errlen)
{
	int rc;

	if (inst->connection_reuse_s > 0 && tb_e2b_valid_id(id)) {
		rc = tb_conn_cache_get(inst->cache, id, conn);
		if (rc == 1)
			return TASKBOX_OK;
		if (rc < 0)
			return tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                   TASKBOX_E_NOMEM,
			                   "connect: out of memory");
	}
	rc = tb_e2b_api_connect(inst, id, conn, errbuf, errlen);
	if (rc == TASKBOX_OK && inst->connection_reuse_s > 0)
		tb_conn_cache_put(inst->cache, conn);
	return rc;
}

/* Replaces conn's envd fields with fresh ones from the API. */
static int reconnect(struct tb_e2b_conn *conn, char *errbuf, size_t errlen)
{
	struct tb_e2b *inst = conn->inst;
	struct tb_e2b_conn fresh;
	int rc;

	memset(&fresh, 0, sizeof fresh);
	fresh.inst = inst;
	tb_conn_cache_drop(inst->cache, conn->id);
	rc = tb_e2b_api_connect(inst, conn->id, &fresh, errbuf, errlen);
	if (rc != TASKBOX_OK) {
		free(fresh.envd_url);
		free(fresh.access_token);
		return rc;
	}
	tb_conn_cache_put(inst->cache, &fresh);
	free(conn->envd_url);
	free(conn->access_token);
	conn->envd_url = fresh.envd_url;
	conn->access_token = fresh.access_token;
	conn->legacy_user = fresh.legacy_user;
	conn->octet_upload = fresh.octet_upload;
	/* connect may have resumed or extended it: describe asks again. */
	memset(&conn->info, 0, sizeof conn->info);
	return TASKBOX_OK;
}

int tb_e2b_retry_stale(struct tb_e2b_conn *conn, int *rc, int *tries,
                       char *errbuf, size_t errlen)
{
	char first[TASKBOX_ERRBUF_SIZE], again[TASKBOX_ERRBUF_SIZE];
	char line[TASKBOX_ERRBUF_SIZE + TASKBOX_SANDBOX_ID_MAX + 64];
	int stale = conn->stale, code;

	conn->stale = 0;
	if (*rc == TASKBOX_OK || !stale || (*tries)++ > 0 ||
	    conn->inst->connection_reuse_s == 0)
		return 0;
	snprintf(first, sizeof first, "%s", errbuf);
	code = reconnect(conn, again, sizeof again);
	if (code == TASKBOX_OK) {
		snprintf(line, sizeof line,
		         "sandbox %s: connected again after: %s", conn->id,
		         first);
		conn->inst->host->log(TASKBOX_LOG_INFO, TB_E2B_NAME, line);
		return 1;
	}
	/* The API no longer knows a sandbox we were connected to. */
	*rc = code == TASKBOX_E_NOT_FOUND ? TASKBOX_E_GONE : code;
	tb_e2b_fail(errbuf, errlen, NULL, NULL, *rc, "%s; connecting again: %s",
	            first, again);
	return 0;
}
