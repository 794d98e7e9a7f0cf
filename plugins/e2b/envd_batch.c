/* read_files: a batch of reads in about one envd round trip. Every
 * GET /files of the batch goes out at once on one multi handle (HTTP/2
 * streams where the sandbox proxy speaks it, else parallel HTTP/1.1
 * connections, reused from earlier calls), and each answer is taken in
 * exactly as read_file takes it in. A 429 is retried alone, the way
 * read_file retries it. Paths under /proc and /sys (cat through exec, see
 * envd_files.c) are read after the others, one by one. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b_int.h"

struct batch {
	struct tb_file_read *reads;
	const struct tb_http_req **reqs;
	struct tb_http_resp **resps;
	int *rcs;
	size_t *item_of; /* reads[k] reads items[item_of[k]] */
	size_t n;        /* reads set up */
};

static void batch_free(struct batch *b)
{
	size_t k;

	for (k = 0; b->reads && k < b->n; k++)
		tb_envd_read_free(&b->reads[k]);
	free(b->reads);
	free(b->reqs);
	free(b->resps);
	free(b->rcs);
	free(b->item_of);
}

/* Fails the batch for item path with code, after the item's message. */
static int fail_item(const char *path, int code, const char *msg, char *errbuf,
                     size_t errlen)
{
	return tb_e2b_fail(errbuf, errlen, NULL, NULL, code,
	                   "read_files %s: %s", path, msg);
}

/* The item's final status from its read's code; 0 when it is settled,
 * else the code the batch fails with (message in errbuf). */
static int settle(struct taskbox_read_item *item, int rc, const char *msg,
                  char *errbuf, size_t errlen)
{
	if (rc == TASKBOX_OK || rc == TASKBOX_E_NOT_FOUND) {
		item->status = rc;
		return TASKBOX_OK;
	}
	return fail_item(item->path ? item->path : "(null)", rc, msg, errbuf,
	                 errlen);
}

static int item_usable(const struct taskbox_read_item *item)
{
	return item && item->struct_size >=
	                   offsetof(struct taskbox_read_item, file_size) +
	                       sizeof item->file_size;
}

/* Sets up one GET per item that is no procfs path. */
static int begin_all(struct tb_e2b_conn *conn, struct batch *b,
                     struct taskbox_read_item *const *items, size_t count,
                     char *errbuf, size_t errlen)
{
	char msg[TASKBOX_ERRBUF_SIZE];
	size_t i;

	for (i = 0; i < count; i++) {
		struct taskbox_read_item *item = items[i];
		struct tb_file_read *fr = &b->reads[b->n];
		int rc;

		if (!item_usable(item))
			return tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                   TASKBOX_E_INVALID,
			                   "read_files: item %zu is too short "
			                   "or missing",
			                   i);
		item->status = TASKBOX_E_INTERNAL;
		item->data.data = NULL;
		item->data.len = 0;
		item->file_size = UINT64_MAX;
		if (item->path && tb_envd_is_procfs(item->path))
			continue;
		rc = tb_envd_read_begin(conn, item->path, item->offset,
		                        item->length, &item->data,
		                        &item->file_size, fr, msg, sizeof msg);
		b->item_of[b->n] = i;
		b->reqs[b->n] = &fr->req;
		b->resps[b->n] = &fr->resp;
		b->n++;
		if (rc != TASKBOX_OK)
			return fail_item(item->path ? item->path : "(null)", rc,
			                 msg, errbuf, errlen);
	}
	return TASKBOX_OK;
}

/* Takes in every answer, in item order; the first failure fails all. */
static int end_all(struct tb_e2b_conn *conn, struct batch *b,
                   struct taskbox_read_item *const *items, size_t failed_at,
                   const char *run_msg, char *errbuf, size_t errlen)
{
	char msg[TASKBOX_ERRBUF_SIZE];
	int rc = TASKBOX_OK;
	size_t k;

	for (k = 0; k < b->n; k++) {
		struct tb_file_read *fr = &b->reads[k];
		int one = b->rcs[k];

		snprintf(msg, sizeof msg, "%s",
		         k == failed_at ? run_msg : "the request failed");
		if (one == TASKBOX_OK && fr->resp.status == 429)
			one = tb_http_run(conn->inst, &fr->req, &fr->resp, msg,
			                  sizeof msg);
		one = tb_envd_read_end(fr, one, msg, sizeof msg);
		if (rc == TASKBOX_OK)
			rc = settle(items[b->item_of[k]], one, msg, errbuf,
			            errlen);
	}
	return rc;
}

/* The procfs items, one exec each. */
static int read_procfs_items(struct tb_e2b_conn *conn,
                             struct taskbox_read_item *const *items,
                             size_t count, char *errbuf, size_t errlen)
{
	char msg[TASKBOX_ERRBUF_SIZE];
	size_t i;
	int rc;

	for (i = 0; i < count; i++) {
		struct taskbox_read_item *item = items[i];

		if (!item->path || !tb_envd_is_procfs(item->path))
			continue;
		rc = tb_envd_read_procfs(conn, item->path, item->offset,
		                         item->length, &item->data,
		                         &item->file_size, msg, sizeof msg);
		rc = settle(item, rc, msg, errbuf, errlen);
		if (rc != TASKBOX_OK)
			return rc;
	}
	return TASKBOX_OK;
}

int tb_envd_read_files(struct tb_e2b_conn *conn,
                       struct taskbox_read_item *const *items, size_t count,
                       char *errbuf, size_t errlen)
{
	struct batch b = {0};
	char run_msg[TASKBOX_ERRBUF_SIZE] = "";
	size_t failed_at = (size_t)-1, slots = count ? count : 1;
	int rc;

	if (count && !items)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "read_files: no items given");
	b.reads = calloc(slots, sizeof *b.reads);
	b.reqs = calloc(slots, sizeof *b.reqs);
	b.resps = calloc(slots, sizeof *b.resps);
	b.rcs = calloc(slots, sizeof *b.rcs);
	b.item_of = calloc(slots, sizeof *b.item_of);
	if (!b.reads || !b.reqs || !b.resps || !b.rcs || !b.item_of) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                 "read_files: out of memory");
		goto out;
	}
	rc = begin_all(conn, &b, items, count, errbuf, errlen);
	if (rc != TASKBOX_OK)
		goto out;
	if (b.n > 0) {
		rc = tb_http_run_batch(conn->inst, b.reqs, b.resps, b.rcs, b.n,
		                       &failed_at, run_msg, sizeof run_msg);
		if (rc != TASKBOX_OK) {
			snprintf(errbuf, errlen, "read_files: %s", run_msg);
			goto out;
		}
		rc = end_all(conn, &b, items, failed_at, run_msg, errbuf,
		             errlen);
		if (rc != TASKBOX_OK)
			goto out;
	}
	rc = read_procfs_items(conn, items, count, errbuf, errlen);
out:
	batch_free(&b);
	return rc;
}
