/* get_task's reading: record, liveness, pages, result. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/host_mask.h"
#include "tasks/record_cache.h"
#include "tasks/sup_client.h"
#include "tasks/task_view.h"
#include "base/error_json.h"
#include "base/utf8_page.h"

struct page {
	struct taskbox_buf data;
	uint64_t offset;
	uint64_t size; /* saved bytes so far, or final */
};

json_t *tb_page_text(const unsigned char *data, size_t len)
{
	unsigned char *masked;
	size_t n;
	json_t *s;

	if (tb_mask_apply(tb_mask_operator(), data, len, &masked, &n) < 0)
		return NULL;
	s = tb_utf8_page_json(masked, n);
	free(masked);
	return s;
}

static json_t *int_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

json_t *tb_task_fields(const char *sandbox_id, const char *task_id,
                       enum tb_task_state state,
                       const struct tb_task_record *rec, const char *error)
{
	json_t *command = json_null(), *err = json_null();

	/* Both may carry command text or sandbox bytes: masked, repaired. */
	if (rec && rec->command)
		command = tb_page_text((const unsigned char *)rec->command,
		                       strlen(rec->command));
	if (error)
		err = tb_page_text((const unsigned char *)error, strlen(error));
	if (command == NULL || err == NULL) {
		json_decref(command);
		json_decref(err);
		return NULL;
	}
	return json_pack(
	    "{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "sandbox_id",
	    sandbox_id, "task_id", task_id, "state", tb_task_state_name(state),
	    "exit_code",
	    rec && tb_task_state_terminal(state) ? int_or_null(rec->exit_code)
	                                         : json_null(),
	    "started_at", rec ? int_or_null(rec->started_at) : json_null(),
	    "finished_at",
	    rec && tb_task_state_terminal(state) ? int_or_null(rec->finished_at)
	                                         : json_null(),
	    "command", command, "error", err);
}

/* Reads one log page of rec's task (rec->json NULL: nothing recorded). A
 * log that does not exist yet is empty. A finished task's log is complete
 * at its recorded size: nothing is read from there on (a finished task's
 * empty stderr costs no provider read), and a small one is read once and
 * then paged from the record cache. */
static int read_page(struct tb_box *box, const char *task_id,
                     const struct tb_task_record *rec, bool terminal,
                     enum tb_log_stream stream, uint64_t offset, size_t limit,
                     struct page *p, char *err, size_t errlen)
{
	static const char *const names[] = {"stdout", "stderr"};
	int64_t recorded = -1;
	char path[128];
	uint64_t size;
	int rc;

	if (rec->json)
		recorded = stream == TB_LOG_STDOUT ? rec->stdout_bytes
		                                   : rec->stderr_bytes;
	terminal = terminal && recorded >= 0;
	p->offset = offset;
	if (terminal) {
		p->size = (uint64_t)recorded;
		if (offset >= (uint64_t)recorded ||
		    tb_record_cache_log_page(rec, stream, offset, limit,
		                             &p->data))
			return TASKBOX_OK;
	}
	snprintf(path, sizeof(path), TB_TASK_ROOT "/%s/%s", task_id,
	         names[stream]);
	rc =
	    tb_box_read(box, path, offset, limit, &p->data, &size, err, errlen);
	if (rc == TASKBOX_E_NOT_FOUND) {
		size = 0;
		rc = TASKBOX_OK;
	}
	if (rc != TASKBOX_OK)
		return rc;
	if (terminal) {
		if (offset == 0)
			tb_record_cache_keep_log(rec, stream, p->data.data,
			                         p->data.len);
	} else if (size != UINT64_MAX) {
		p->size = size;
	} else {
		p->size = offset + p->data.len;
	}
	return TASKBOX_OK;
}

/* Joins two messages into buf ("a; b"), either may be NULL. */
static const char *join(char *buf, size_t len, const char *a, const char *b)
{
	if (a && b)
		snprintf(buf, len, "%s; %s", a, b);
	else
		snprintf(buf, len, "%s", a ? a : b ? b : "");
	return buf[0] ? buf : NULL;
}

/* Reads the record and applies the liveness rule. Returns 0 with *state
 * and *rec (possibly empty) and *why (a reason for unknown, or NULL), or 1
 * with a tool error in *result. */
static int read_state(struct tb_box *box, const char *task_id,
                      struct tb_task_record *rec, enum tb_task_state *state,
                      char *why, size_t whylen, json_t **result)
{
	char err[TB_ERR_MAX];
	int rc, exists, alive;

	why[0] = '\0';
	rc = tb_sup_read_status(box, task_id, rec, err, sizeof(err));
	if (rc == TASKBOX_E_NOT_FOUND) {
		exists = tb_sup_task_dir_exists(box, task_id, err, sizeof(err));
		if (exists < 0)
			goto tool_error;
		if (exists == 0) {
			*result =
			    tb_error_jsonf("task_id: no task %s in sandbox "
			                   "%s (removed, or never started "
			                   "there)",
			                   task_id, box->id);
			return 1;
		}
		*state = TB_TASK_UNKNOWN;
		snprintf(
		    why, whylen,
		    "the task has no status record: its start was "
		    "interrupted before the supervisor recorded it; destroy "
		    "the sandbox if it cannot be inspected");
		return 0;
	}
	if (rc == TASKBOX_E_PROTOCOL) {
		*state = TB_TASK_UNKNOWN;
		snprintf(why, whylen, "%s", err);
		return 0;
	}
	if (rc != TASKBOX_OK)
		goto tool_error;
	*state = rec->state;
	if (rec->state != TB_TASK_RUNNING)
		return 0;
	alive = tb_sup_alive(box, rec, err, sizeof(err));
	if (alive == 1)
		return 0;
	/* A supervisor that just finished wrote its final record, then
	 * exited: look again before calling it gone. */
	tb_task_record_clear(rec);
	rc = tb_sup_read_status(box, task_id, rec, err, sizeof(err));
	if (rc == TASKBOX_OK && rec->state != TB_TASK_RUNNING) {
		*state = rec->state;
		return 0;
	}
	*state = TB_TASK_UNKNOWN;
	if (alive == 0) {
		/* Nothing enforces its timeout any more. */
		tb_sup_reap_orphans(box, task_id);
		snprintf(why, whylen, "%s", TB_SUP_GONE_WHY);
	} else
		snprintf(why, whylen, "could not check the supervisor: %.900s",
		         err);
	return 0;
tool_error:
	*result = tb_error_json(err);
	return 1;
}

int tb_task_view(struct tb_box *box, const char *task_id,
                 const struct tb_page_req *pr, const char *note,
                 json_t **result, struct tb_task_sup *sup)
{
	struct tb_task_record rec;
	struct page out = {0}, errp = {0};
	enum tb_task_state state;
	char why[TB_ERR_MAX], err[TB_ERR_MAX], msg[3 * TB_ERR_MAX];
	const char *error;
	bool terminal;
	json_t *r = NULL;
	int rc;

	memset(&rec, 0, sizeof(rec));
	if (sup)
		memset(sup, 0, sizeof *sup);
	if (read_state(box, task_id, &rec, &state, why, sizeof(why), result))
		return 1;
	if (sup && state == TB_TASK_RUNNING && rec.json) {
		sup->pid = rec.supervisor_pid;
		sup->start = rec.supervisor_start;
	}
	terminal = tb_task_state_terminal(state);
	if (read_page(box, task_id, &rec, terminal, TB_LOG_STDOUT,
	              pr->stdout_offset, pr->limit, &out, err,
	              sizeof(err)) != TASKBOX_OK ||
	    read_page(box, task_id, &rec, terminal, TB_LOG_STDERR,
	              pr->stderr_offset, pr->limit, &errp, err,
	              sizeof(err)) != TASKBOX_OK) {
		*result = tb_error_json(err);
		rc = 1;
		goto out;
	}
	error = join(msg, sizeof(msg), rec.json ? rec.error : NULL,
	             why[0] ? why : NULL);
	if (!terminal && note) {
		char tmp[sizeof(msg)];

		snprintf(tmp, sizeof(tmp), "%s", msg);
		error = join(msg, sizeof(msg), tmp[0] ? tmp : NULL, note);
	}
	r = tb_task_fields(box->id, task_id, state, rec.json ? &rec : NULL,
	                   error);
	if (r == NULL ||
	    json_object_set_new(r, "stdout",
	                        tb_page_text(out.data.data, out.data.len)) ||
	    json_object_set_new(r, "stderr",
	                        tb_page_text(errp.data.data, errp.data.len)) ||
	    json_object_set_new(
	        r, "stdout_next_offset",
	        json_integer((json_int_t)(out.offset + out.data.len))) ||
	    json_object_set_new(
	        r, "stderr_next_offset",
	        json_integer((json_int_t)(errp.offset + errp.data.len))) ||
	    json_object_set_new(r, "stdout_size",
	                        json_integer((json_int_t)out.size)) ||
	    json_object_set_new(r, "stderr_size",
	                        json_integer((json_int_t)errp.size)) ||
	    json_object_set_new(
	        r, "stdout_truncated",
	        json_boolean(rec.json && rec.stdout_truncated)) ||
	    json_object_set_new(
	        r, "stderr_truncated",
	        json_boolean(rec.json && rec.stderr_truncated))) {
		json_decref(r);
		*result = tb_error_json("out of memory building the result");
		rc = 1;
		goto out;
	}
	*result = r;
	rc = 0;
out:
	tb_buf_free(&out.data);
	tb_buf_free(&errp.data);
	tb_task_record_clear(&rec);
	return rc;
}
