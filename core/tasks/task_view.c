/* get_task's reading: record, liveness, pages, result. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tasks/host_mask.h"
#include "tasks/record_cache.h"
#include "tasks/sup_client.h"
#include "tasks/task_ring.h"
#include "tasks/task_view.h"
#include "base/error_json.h"
#include "base/utf8_page.h"

struct page {
	struct taskbox_buf data;
	uint64_t offset;
	uint64_t size; /* saved bytes so far, or final */
};

/* A view's reads made together, in one provider batch, where the provider
 * batches reads: the record, the supervisor's heartbeat, and both pages
 * (read before the record says whether the task has ended). */
struct prefetch {
	bool on;
	bool pages; /* the pages were asked for */
	bool beat;  /* the heartbeat was asked for */
	struct taskbox_read_item status, heartbeat, page[2];
	char paths[4][128];
	/* Or what the supervisor's wait verb read in the sandbox: the
	 * record, from a supervisor it saw alive, and both pages. */
	const struct tb_task_record *given;
};

/* Reads everything a view needs in one batch. Returns TASKBOX_OK (with
 * pf->on false when the provider does not batch), or the batch's failure
 * with err set. */
static int prefetch(struct tb_box *box, const char *task_id,
                    const struct tb_page_req *pr, struct prefetch *pf,
                    char *err, size_t errlen)
{
	struct taskbox_read_item *items[4];
	size_t n = 0;
	int rc;

	memset(pf, 0, sizeof(*pf));
	if (!tb_box_batches_reads(box))
		return TASKBOX_OK;
	pf->status.path = tb_sup_task_path(pf->paths[0], sizeof(pf->paths[0]),
	                                   task_id, "status.json");
	pf->status.length = TB_STATUS_MAX;
	items[n++] = &pf->status;
	/* An ended task whose pages the record cache holds needs only its
	 * record (which says the task, and its sandbox, are still there). */
	if (tb_record_cache_pages_kept(task_id, pr->stdout_offset,
	                               pr->stderr_offset))
		goto read;
	pf->pages = true;
	pf->page[0].path = tb_sup_task_path(pf->paths[1], sizeof(pf->paths[1]),
	                                    task_id, "stdout");
	pf->page[0].offset = pr->stdout_offset;
	pf->page[0].length = pr->limit;
	items[n++] = &pf->page[0];
	pf->page[1].path = tb_sup_task_path(pf->paths[2], sizeof(pf->paths[2]),
	                                    task_id, "stderr");
	pf->page[1].offset = pr->stderr_offset;
	pf->page[1].length = pr->limit;
	items[n++] = &pf->page[1];
	/* Where the host watches pidfds, it needs no heartbeat. */
	pf->beat = !(box->inst->plugin->features & TASKBOX_FEATURE_HOST_PIDS);
	if (pf->beat) {
		pf->heartbeat.path = tb_sup_task_path(
		    pf->paths[3], sizeof(pf->paths[3]), task_id, "heartbeat");
		pf->heartbeat.length = 32;
		items[n++] = &pf->heartbeat;
	}
read:
	rc = tb_box_read_many(box, items, n, err, errlen);
	pf->on = rc == TASKBOX_OK;
	return rc;
}

static void prefetch_free(struct prefetch *pf)
{
	tb_buf_free(&pf->status.data);
	tb_buf_free(&pf->heartbeat.data);
	tb_buf_free(&pf->page[0].data);
	tb_buf_free(&pf->page[1].data);
}

/* Whether the prefetched heartbeat proves the supervisor alive. */
static bool beat_says_alive(const struct prefetch *pf)
{
	struct timespec ts;

	if (!pf->on || !pf->beat || pf->heartbeat.status != TASKBOX_OK)
		return false;
	clock_gettime(CLOCK_REALTIME, &ts);
	return tb_heartbeat_fresh(
	           pf->heartbeat.data.data, pf->heartbeat.data.len,
	           (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000) == 1;
}

/* Takes a prefetched page of a log into p when it can stand for a read
 * now: always while the task runs; once it has ended, only when it holds
 * every byte the record says the log has there (the batch may have read
 * the log before its last bytes were written). True when taken. */
static bool take_prefetched(struct taskbox_read_item *it, bool terminal,
                            int64_t recorded, struct page *p)
{
	uint64_t size = it->status == TASKBOX_OK ? it->file_size : 0;

	if (terminal) {
		uint64_t want = (uint64_t)recorded > it->offset
		                    ? (uint64_t)recorded - it->offset
		                    : 0;

		if (want > it->length)
			want = it->length;
		if (it->data.len != want)
			return false;
	} else if (size != UINT64_MAX) {
		p->size = size;
	} else {
		p->size = it->offset + it->data.len;
	}
	p->data = it->data;
	memset(&it->data, 0, sizeof(it->data));
	return true;
}

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

static json_t *str_or_null(const char *v)
{
	return v ? json_string(v) : json_null();
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
	    "{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o}",
	    "sandbox_id", sandbox_id, "task_id", task_id, "state",
	    tb_task_state_name(state), "exit_code",
	    rec && tb_task_state_terminal(state) ? int_or_null(rec->exit_code)
	                                         : json_null(),
	    "started_at", rec ? int_or_null(rec->started_at) : json_null(),
	    "finished_at",
	    rec && tb_task_state_terminal(state) ? int_or_null(rec->finished_at)
	                                         : json_null(),
	    "command", command, "error", err, "stdin",
	    rec && rec->stdin_mode ? rec->stdin_mode : "null",
	    "idempotency_key", str_or_null(rec ? rec->idempotency_key : NULL),
	    "signal",
	    str_or_null(rec && tb_task_state_terminal(state) ? rec->signal
	                                                     : NULL),
	    "ended_by",
	    str_or_null(tb_task_ended_by(state, rec ? rec->ended_by : NULL,
	                                 rec && rec->supervisor_gone)));
}

/* Reads one log page of rec's task (rec->json NULL: nothing recorded). A
 * log that does not exist yet is empty. A finished task's log is complete
 * at its recorded size: nothing is read from there on (a finished task's
 * empty stderr costs no provider read), and a small one is read once and
 * then paged from the record cache. */
static int read_page(struct tb_box *box, const char *task_id,
                     const struct tb_task_record *rec, bool terminal,
                     enum tb_log_stream stream, uint64_t offset, size_t limit,
                     struct prefetch *pf, struct page *p, char *err,
                     size_t errlen)
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
	if (pf->pages &&
	    take_prefetched(&pf->page[stream], terminal, recorded, p))
		goto got;
	tb_sup_task_path(path, sizeof(path), task_id, names[stream]);
	rc =
	    tb_box_read(box, path, offset, limit, &p->data, &size, err, errlen);
	if (rc == TASKBOX_E_NOT_FOUND) {
		size = 0;
		rc = TASKBOX_OK;
	}
	if (rc != TASKBOX_OK)
		return rc;
	if (!terminal)
		p->size = size != UINT64_MAX ? size : offset + p->data.len;
got:
	if (terminal) {
		if (offset == 0)
			tb_record_cache_keep_log(rec, stream, p->data.data,
			                         p->data.len);
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
                      const struct prefetch *pf, struct tb_task_record *rec,
                      enum tb_task_state *state, char *why, size_t whylen,
                      int *fail, json_t **result)
{
	char err[TB_ERR_MAX];
	int rc, exists, alive;

	why[0] = '\0';
	if (pf->given) {
		*rec = *pf->given;
		json_incref(rec->json);
		rc = TASKBOX_OK;
	} else if (!pf->on)
		rc = tb_sup_read_status(box, task_id, rec, err, sizeof(err));
	else if ((rc = pf->status.status) == TASKBOX_OK &&
	         tb_sup_parse_status(box, task_id, &pf->status.data, rec, err,
	                             sizeof(err)) != TASKBOX_OK)
		/* A backend that sizes a file by one open and reads another
		 * (the record renamed over it between) answers a cut record:
		 * read it once more, alone, before calling the task unknown. */
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
	alive =
	    (pf->given && !pf->given->supervisor_gone) || beat_says_alive(pf)
	        ? 1
	        : tb_sup_alive(box, rec, err, sizeof(err));
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
		rec->supervisor_gone = rec->json != NULL;
		/* Nothing enforces its timeout any more. */
		tb_sup_reap_orphans(box, task_id);
		snprintf(why, whylen, "%s", TB_SUP_GONE_WHY);
	} else
		snprintf(why, whylen, "could not check the supervisor: %.900s",
		         err);
	return 0;
tool_error:
	*fail = rc;
	snprintf(why, whylen, "%s", err);
	*result = tb_error_json(err);
	return 1;
}

json_t *tb_task_view_sandbox_gone(const char *sandbox_id, const char *task_id,
                                  const struct tb_page_req *pr, const char *why)
{
	char msg[TB_ERR_MAX + 256];
	json_t *r;

	snprintf(msg, sizeof(msg),
	         "sandbox %s is gone (its lifetime ran out, or it was "
	         "destroyed) while the task was running: the task ended with "
	         "it, its outcome and output were not saved anywhere else "
	         "(%s)",
	         sandbox_id, why);
	r = tb_task_fields(sandbox_id, task_id, TB_TASK_UNKNOWN, NULL, msg);
	if (r &&
	    (json_object_set_new(r, "ended_by",
	                         json_string("sandbox_expired")) ||
	     json_object_set_new(r, "stdout", json_string("")) ||
	     json_object_set_new(r, "stderr", json_string("")) ||
	     json_object_set_new(r, "stdout_next_offset",
	                         json_integer((json_int_t)pr->stdout_offset)) ||
	     json_object_set_new(r, "stderr_next_offset",
	                         json_integer((json_int_t)pr->stderr_offset)) ||
	     json_object_set_new(r, "stdout_size", json_integer(0)) ||
	     json_object_set_new(r, "stderr_size", json_integer(0)) ||
	     json_object_set_new(r, "stdout_truncated", json_false()) ||
	     json_object_set_new(r, "stderr_truncated", json_false()))) {
		json_decref(r);
		r = NULL;
	}
	return r;
}

json_t *tb_task_view_if_gone(int rc, const char *sandbox_id,
                             const char *task_id, const struct tb_page_req *pr,
                             const char *why)
{
	if ((rc != TASKBOX_E_GONE && rc != TASKBOX_E_NOT_FOUND) ||
	    !tb_task_ring_has(&tb_tasks_seen_running, sandbox_id, task_id))
		return NULL;
	return tb_task_view_sandbox_gone(sandbox_id, task_id, pr, why);
}

/* A view that failed with rc: the sandbox gone under a task this process
 * saw running is that task's end (a result); anything else is the tool
 * error already in *result. Returns 0 or 1 as tb_task_view does. */
static int view_failed(struct tb_box *box, const char *task_id,
                       const struct tb_page_req *pr, int rc, const char *err,
                       json_t **result)
{
	json_t *gone;

	if (rc != TASKBOX_E_GONE ||
	    !tb_task_ring_has(&tb_tasks_seen_running, box->id, task_id))
		return 1;
	gone = tb_task_view_sandbox_gone(box->id, task_id, pr, err);
	if (gone == NULL)
		return 1;
	json_decref(*result);
	*result = gone;
	return 0;
}

/* tb_task_view with what pf holds (freed here). */
static int view_from(struct tb_box *box, const char *task_id,
                     const struct tb_page_req *pr, const char *note,
                     struct prefetch *pf_in, json_t **result,
                     struct tb_task_sup *sup)
{
	struct tb_task_record rec;
	struct page out = {0}, errp = {0};
	enum tb_task_state state;
	char why[TB_ERR_MAX], err[TB_ERR_MAX], msg[3 * TB_ERR_MAX];
	const char *error;
	bool terminal;
	json_t *r = NULL;
	int rc, fail = TASKBOX_OK;
	struct prefetch pf = *pf_in;

	memset(&rec, 0, sizeof(rec));
	if (read_state(box, task_id, &pf, &rec, &state, why, sizeof(why), &fail,
	               result)) {
		prefetch_free(&pf);
		return view_failed(box, task_id, pr, fail, why, result);
	}
	if (state == TB_TASK_RUNNING)
		tb_task_ring_add(&tb_tasks_seen_running, box->id, task_id);
	if (sup && state == TB_TASK_RUNNING && rec.json) {
		sup->pid = rec.supervisor_pid;
		sup->start = rec.supervisor_start;
	}
	terminal = tb_task_state_terminal(state);
	if ((fail = read_page(box, task_id, &rec, terminal, TB_LOG_STDOUT,
	                      pr->stdout_offset, pr->limit, &pf, &out, err,
	                      sizeof(err))) != TASKBOX_OK ||
	    (fail = read_page(box, task_id, &rec, terminal, TB_LOG_STDERR,
	                      pr->stderr_offset, pr->limit, &pf, &errp, err,
	                      sizeof(err))) != TASKBOX_OK) {
		*result = tb_error_json(err);
		rc = view_failed(box, task_id, pr, fail, err, result);
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
	prefetch_free(&pf);
	tb_buf_free(&out.data);
	tb_buf_free(&errp.data);
	tb_task_record_clear(&rec);
	return rc;
}

int tb_task_view(struct tb_box *box, const char *task_id,
                 const struct tb_page_req *pr, const char *note,
                 json_t **result, struct tb_task_sup *sup)
{
	struct prefetch pf;
	char err[TB_ERR_MAX];
	int fail;

	if (sup)
		memset(sup, 0, sizeof *sup);
	if ((fail = prefetch(box, task_id, pr, &pf, err, sizeof(err))) !=
	    TASKBOX_OK) {
		*result = tb_error_json(err);
		return view_failed(box, task_id, pr, fail, err, result);
	}
	return view_from(box, task_id, pr, note, &pf, result, sup);
}

int tb_task_view_given(struct tb_box *box, const char *task_id,
                       const struct tb_page_req *pr, const char *note,
                       const struct tb_task_record *rec,
                       struct taskbox_read_item page[2], json_t **result,
                       struct tb_task_sup *sup)
{
	struct prefetch pf;

	if (sup)
		memset(sup, 0, sizeof *sup);
	memset(&pf, 0, sizeof pf);
	pf.on = pf.pages = true;
	pf.given = rec;
	pf.page[0] = page[0];
	pf.page[1] = page[1];
	memset(page, 0, 2 * sizeof *page);
	return view_from(box, task_id, pr, note, &pf, result, sup);
}
