/* Provider calls for the tasks layer: connect, exec, read, renew, destroy. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "host/provider_stats.h"
#include "tasks/box.h"
#include "tasks/task_ring.h"
#include "base/log.h"

static const char *const status_texts[] = {
    [TASKBOX_OK] = "ok",
    [TASKBOX_E_INVALID] = "refused as invalid",
    [TASKBOX_E_NOMEM] = "out of memory",
    [TASKBOX_E_NOT_FOUND] = "does not exist",
    [TASKBOX_E_GONE] = "is gone (destroyed or expired)",
    [TASKBOX_E_UNAVAILABLE] = "provider unavailable",
    [TASKBOX_E_PERMISSION] = "permission denied",
    [TASKBOX_E_AUTH] = "credentials missing or rejected",
    [TASKBOX_E_RATE_LIMITED] = "rate limited by the provider",
    [TASKBOX_E_TIMEOUT] = "provider did not answer in time",
    [TASKBOX_E_PROTOCOL] = "provider answered something malformed",
    [TASKBOX_E_UNSUPPORTED] = "not supported by this provider",
    [TASKBOX_E_IO] = "I/O error",
    [TASKBOX_E_INTERNAL] = "internal error in the provider",
    [TASKBOX_E_CANCELLED] = "cancelled",
};

const char *tb_status_text(int status)
{
	if (status < 0 ||
	    (size_t)status >= sizeof(status_texts) / sizeof(status_texts[0]))
		return "unknown provider error";
	return status_texts[status];
}

/* "sandbox X does not exist (plugin text)". */
static void sandbox_err(char *err, size_t errlen, const struct tb_box *box,
                        const char *what, int status, const char *plugin_msg)
{
	snprintf(err, errlen, "sandbox %s: %s%s%s (%s)", box->id, what,
	         what[0] ? ": " : "", tb_status_text(status),
	         plugin_msg[0] ? plugin_msg : "no detail from the provider");
}

void tb_box_not_found(const struct tb_box *box, char *err, size_t errlen)
{
	snprintf(err, errlen, "sandbox %s: %s", box->id,
	         tb_status_text(TASKBOX_E_NOT_FOUND));
}

int tb_box_resolve(const char *sandbox_id, const char *field,
                   struct tb_box *box, char *err, size_t errlen)
{
	memset(box, 0, sizeof(*box));
	if (tb_sandbox_ref_parse(sandbox_id, field, &box->ref, err, errlen) < 0)
		return -1;
	box->inst = tb_registry_find(box->ref.instance);
	if (box->inst == NULL) {
		snprintf(err, errlen,
		         "%s: no provider instance named \"%s\" is configured",
		         field, box->ref.instance);
		return -1;
	}
	snprintf(box->id, sizeof(box->id), "%s", sandbox_id);
	return 0;
}

int tb_box_open(const char *sandbox_id, const char *field, struct tb_box *box,
                char *err, size_t errlen)
{
	if (tb_box_resolve(sandbox_id, field, box, err, errlen) < 0)
		return TASKBOX_E_INVALID;
	return tb_box_connect(box, err, errlen);
}

int tb_box_connect(struct tb_box *box, char *err, size_t errlen)
{
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	uint64_t t0 = tb_provider_call_start();
	rc = box->inst->plugin->ops.connect(box->inst->handle, box->ref.native,
	                                    &box->conn, perr, sizeof(perr));
	tb_provider_call_end(TB_POP_CONNECT, t0, rc);
	if (rc == TASKBOX_E_NOT_FOUND) {
		/* One answer for a sandbox that is not there, whatever the
		 * provider says: the one ownership gives for another's. */
		box->conn = NULL;
		tb_box_not_found(box, err, errlen);
	} else if (rc != TASKBOX_OK) {
		box->conn = NULL;
		sandbox_err(err, errlen, box, "", rc, perr);
	}
	return rc;
}

void tb_box_close(struct tb_box *box)
{
	if (box->conn)
		box->inst->plugin->ops.close(box->conn);
	box->conn = NULL;
}

int tb_box_exec(struct tb_box *box, const char *const *argv, const char *cwd,
                uint32_t timeout_ms, size_t output_limit,
                int (*cancelled)(void *), void *arg,
                struct taskbox_exec_result *res, char *err, size_t errlen)
{
	struct taskbox_exec_req req;

	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.cwd = cwd;
	req.timeout_ms = timeout_ms;
	req.output_limit = output_limit;
	req.cancelled = cancelled;
	req.cancelled_arg = arg;
	return tb_box_exec_req(box, &req, res, err, errlen);
}

int tb_box_exec_req(struct tb_box *box, struct taskbox_exec_req *req,
                    struct taskbox_exec_result *res, char *err, size_t errlen)
{
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	req->struct_size = sizeof(*req);
	memset(res, 0, sizeof(*res));
	res->struct_size = sizeof(*res);
	res->exit_code = -1;
	uint64_t t0 = tb_provider_call_start();
	rc = box->inst->plugin->ops.exec(box->conn, req, res, perr,
	                                 sizeof(perr));
	tb_provider_call_end(TB_POP_EXEC, t0, rc);
	if (rc != TASKBOX_OK)
		sandbox_err(err, errlen, box, "exec", rc, perr);
	return rc;
}

void tb_buf_free(struct taskbox_buf *buf)
{
	if (buf->data)
		tb_host()->free(buf->data);
	buf->data = NULL;
	buf->len = 0;
}

void tb_exec_result_free(struct taskbox_exec_result *res)
{
	tb_buf_free(&res->out);
	tb_buf_free(&res->err);
}

int tb_box_read(struct tb_box *box, const char *path, uint64_t offset,
                size_t length, struct taskbox_buf *data, uint64_t *file_size,
                char *err, size_t errlen)
{
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	memset(data, 0, sizeof(*data));
	*file_size = UINT64_MAX;
	uint64_t t0 = tb_provider_call_start();
	rc = box->inst->plugin->ops.read_file(box->conn, path, offset, length,
	                                      data, file_size, perr,
	                                      sizeof(perr));
	tb_provider_call_end(TB_POP_READ_FILE, t0, rc);
	if (rc != TASKBOX_OK) {
		tb_buf_free(data);
		snprintf(err, errlen, "sandbox %s: reading %s: %s (%s)",
		         box->id, path, tb_status_text(rc),
		         perr[0] ? perr : "no detail from the provider");
	} else if (data->len > length) {
		tb_buf_free(data);
		snprintf(err, errlen,
		         "sandbox %s: reading %s: the provider returned more "
		         "bytes than asked",
		         box->id, path);
		rc = TASKBOX_E_PROTOCOL;
	}
	return rc;
}

bool tb_box_batches_reads(const struct tb_box *box)
{
	return box->inst->plugin->read_files != NULL;
}

void tb_read_items_free(struct taskbox_read_item *const *items, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		tb_buf_free(&items[i]->data);
}

/* Checks a batch's answers: every status known, no page too long.
 * Returns TASKBOX_OK or the rule broken, with err set. */
static int check_items(struct tb_box *box,
                       struct taskbox_read_item *const *items, size_t count,
                       char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < count; i++) {
		const struct taskbox_read_item *it = items[i];
		const char *why = NULL;

		if (it->status != TASKBOX_OK &&
		    it->status != TASKBOX_E_NOT_FOUND)
			why = "the provider left its status unset";
		else if (it->data.len > it->length)
			why = "the provider returned more bytes than asked";
		else if (it->status != TASKBOX_OK && it->data.len)
			why = "the provider returned bytes for a missing file";
		if (why) {
			snprintf(err, errlen, "sandbox %s: reading %s: %s",
			         box->id, it->path, why);
			return TASKBOX_E_PROTOCOL;
		}
	}
	return TASKBOX_OK;
}

/* The fallback without read_files: one read_file per item. */
static int read_one_by_one(struct tb_box *box,
                           struct taskbox_read_item *const *items, size_t count,
                           char *err, size_t errlen)
{
	size_t i;
	int rc;

	for (i = 0; i < count; i++) {
		struct taskbox_read_item *it = items[i];

		rc = tb_box_read(box, it->path, it->offset, it->length,
		                 &it->data, &it->file_size, err, errlen);
		if (rc != TASKBOX_OK && rc != TASKBOX_E_NOT_FOUND)
			return rc;
		it->status = rc;
	}
	return TASKBOX_OK;
}

int tb_box_read_many(struct tb_box *box, struct taskbox_read_item *const *items,
                     size_t count, char *err, size_t errlen)
{
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	size_t i;
	int rc;

	for (i = 0; i < count; i++) {
		struct taskbox_read_item *it = items[i];

		it->struct_size = sizeof(*it);
		/* A status no provider gives, so an unanswered item shows. */
		it->status = -1;
		memset(&it->data, 0, sizeof(it->data));
		it->file_size = UINT64_MAX;
	}
	if (!tb_box_batches_reads(box)) {
		rc = read_one_by_one(box, items, count, err, errlen);
	} else {
		uint64_t t0 = tb_provider_call_start();
		rc = box->inst->plugin->read_files(box->conn, items, count,
		                                   perr, sizeof(perr));
		tb_provider_call_end(TB_POP_READ_FILES, t0, rc);
		if (rc != TASKBOX_OK)
			snprintf(err, errlen, "sandbox %s: reading: %s (%s)",
			         box->id, tb_status_text(rc),
			         perr[0] ? perr
			                 : "no detail from the provider");
		else
			rc = check_items(box, items, count, err, errlen);
	}
	if (rc != TASKBOX_OK)
		tb_read_items_free(items, count);
	return rc;
}

void tb_box_renew(struct tb_box *box, uint32_t lifetime_s)
{
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	if (box->inst->plugin->ops.renew == NULL || lifetime_s == 0)
		return;
	uint64_t t0 = tb_provider_call_start();
	rc = box->inst->plugin->ops.renew(box->conn, lifetime_s, perr,
	                                  sizeof(perr));
	tb_provider_call_end(TB_POP_RENEW, t0, rc);
	if (rc != TASKBOX_OK)
		tb_log(TB_LOG_WARN, "sandbox %s: renewal failed: %s (%s)",
		       box->id, tb_status_text(rc), perr);
}

int tb_box_destroy(struct tb_box *box, char *err, size_t errlen)
{
	char perr[TASKBOX_ERRBUF_SIZE] = "";
	int rc;

	uint64_t t0 = tb_provider_call_start();
	rc = box->inst->plugin->ops.destroy(box->inst->handle, box->ref.native,
	                                    perr, sizeof(perr));
	tb_provider_call_end(TB_POP_DESTROY, t0, rc);
	/* Its tasks did not outlive their sandbox: they were destroyed. */
	tb_task_ring_forget_sandbox(&tb_tasks_seen_running, box->id);
	if (rc != TASKBOX_OK)
		sandbox_err(err, errlen, box, "destroy", rc, perr);
	return rc;
}
