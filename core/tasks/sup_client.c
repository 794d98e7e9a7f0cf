/* Supervisor verbs over exec, status over read_file, liveness over /proc. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/log.h"
#include "tasks/pid_watch.h"
#include "tasks/record_cache.h"
#include "tasks/sup_client.h"
#include "tasks/sup_native.h"
#include "tasks/sup_upload.h"
#include "tasks/task_ring.h"

/* Time allowed for the start and remove verbs: a python3 start-up plus a
 * little work, on a slow remote provider. */
#define VERB_TIMEOUT_MS 30000
/* cancel waits up to 3 s for the task to end, on top of that. */
#define CANCEL_WAIT "3"
#define CANCEL_TIMEOUT_MS 33000
/* The verbs print one record; records are small, but a command up to
 * 96 KiB encoded may be in it. */
#define VERB_OUTPUT_LIMIT (1024 * 1024)
/* The watch verb answers for many tasks at once, pages included: the host
 * asks it for at most TB_SUP_WATCH_PAGE_BUDGET bytes of pages, which
 * base64 makes a third larger, beside a record per interest. */
#define WATCH_OUTPUT_LIMIT                                                     \
	(TB_SUP_WATCH_PAGE_BUDGET / 3 * 4 + TB_SUP_WATCH_MAX * 8192)
#define STAT_MAX 4096
/* The most arguments of a verb, the verb included. */
#define VERB_ARGS_MAX 24

void tb_sup_reply_clear(struct tb_sup_reply *r)
{
	tb_task_record_clear(&r->rec);
	memset(r, 0, sizeof(*r));
}

/* The supervisor program never ran: no output, a failed exec, and an exit
 * status or a message of the exec itself (126/127, or the host path on
 * stderr, as bwrap reports a missing program). No supervisor writes to
 * stderr or exits 126/127 itself, and a crash of one is not taken for
 * this. */
static int not_run(enum tb_sup_kind kind, const struct taskbox_exec_result *res)
{
	const char *path = tb_sup_native_path();

	if (res->timed_out || res->out.len != 0 || res->exit_code == 0)
		return 0;
	if (res->exit_code == 126 || res->exit_code == 127)
		return 1;
	return kind == TB_SUP_HOST_NATIVE && path && res->err.data &&
	       memmem(res->err.data, res->err.len, path, strlen(path)) != NULL;
}

/* Runs the verb ARGS (the verb, then its options) with the box's
 * supervisor (sup_native.h). A supervisor that could not run in the
 * sandbox started nothing, so the verb runs again with the next one: the
 * host's native binary not visible there gives python3 (for every later
 * verb on that instance); python3 missing gives the static binary, copied
 * into the sandbox when it is not there yet. *never_ran is set when no
 * supervisor could run there at all (err says why): nothing was started.
 * never_ran may be NULL. IN (may be NULL) is the verb's stdin, for a
 * provider with TASKBOX_FEATURE_EXEC_STDIN only. output_limit: bytes kept
 * of each stream. */
static int exec_verb(struct tb_box *box, const char *const *args,
                     uint32_t timeout_ms, const struct tb_sup_stop *stop,
                     const struct taskbox_buf *in, size_t output_limit,
                     struct taskbox_exec_result *res, int *never_ran, char *err,
                     size_t errlen)
{
	const char *argv[TB_SUP_PREFIX_MAX + VERB_ARGS_MAX + 1];
	struct taskbox_exec_req req;
	enum tb_sup_kind kind = tb_sup_choose(box);
	int rc, uploaded = 0, unused;
	size_t n;

	if (!never_ran)
		never_ran = &unused;
	*never_ran = 0;
again:
	n = tb_sup_prefix(kind, argv);
	for (size_t i = 0; args[i] && i < VERB_ARGS_MAX; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.timeout_ms = timeout_ms;
	req.output_limit = output_limit;
	if (stop) {
		req.cancelled = stop->cancelled;
		req.cancelled_arg = stop->arg;
		req.until_newline = stop->answer_line;
	}
	if (in) {
		req.stdin_data =
		    in->data ? in->data : (const unsigned char *)"";
		req.stdin_len = in->len;
	}
	rc = tb_box_exec_req(box, &req, res, err, errlen);
	if (rc != TASKBOX_OK || !not_run(kind, res))
		return rc;
	switch (kind) {
	case TB_SUP_HOST_NATIVE:
		tb_sup_native_unusable(box, res->exit_code);
		kind = TB_SUP_PYTHON;
		break;
	case TB_SUP_PYTHON:
		tb_sup_mark_pythonless(box);
		kind = TB_SUP_STATIC;
		if (tb_sup_static_sandbox_path() != NULL)
			break; /* another process may have copied it */
		/* Nothing to copy: tb_sup_upload says so. */
		tb_exec_result_free(res);
		*never_ran = 1;
		return tb_sup_upload(box, err, errlen);
	case TB_SUP_STATIC:
		*never_ran = 1;
		if (uploaded) {
			size_t shown = res->err.len > 300 ? 300 : res->err.len;

			while (shown > 0 && res->err.data[shown - 1] == '\n')
				shown--;
			snprintf(err, errlen,
			         "sandbox %s %s, and the static supervisor "
			         "copied to %s does not run there (exit %d: "
			         "%.*s); %s",
			         box->id, tb_sup_static_why(box), argv[0],
			         res->exit_code, (int)shown,
			         res->err.data ? (const char *)res->err.data
			                       : "",
			         tb_sup_static_remedy(box));
			tb_exec_result_free(res);
			return TASKBOX_E_UNSUPPORTED;
		}
		uploaded = 1;
		tb_exec_result_free(res);
		rc = tb_sup_upload(box, err, errlen);
		if (rc != TASKBOX_OK)
			return rc;
		*never_ran = 0;
		goto again;
	}
	tb_exec_result_free(res);
	goto again;
}

/* Notes in reply that no supervisor could run in the sandbox (exec_verb's
 * never_ran): the verb is refused, nothing was started. */
static void refuse_unsupported(struct tb_sup_reply *reply)
{
	reply->outcome = TB_SUP_REFUSED;
	snprintf(reply->code, sizeof(reply->code), "unsupported");
}

/* Runs the verb ARGS and sorts its output into reply. */
static void run_verb(struct tb_box *box, const char *const *args,
                     const char *task_id, uint32_t timeout_ms,
                     const struct tb_sup_stop *stop, struct tb_sup_reply *reply)
{
	struct taskbox_exec_result res;
	char perr[TB_ERR_MAX];
	const char *out;
	size_t len;
	int rc, never_ran;

	memset(reply, 0, sizeof(*reply));
	reply->outcome = TB_SUP_UNSURE;
	rc =
	    exec_verb(box, args, timeout_ms, stop, NULL, VERB_OUTPUT_LIMIT,
	              &res, &never_ran, reply->message, sizeof(reply->message));
	if (never_ran) {
		refuse_unsupported(reply);
		goto out;
	}
	if (rc != TASKBOX_OK)
		goto out;
	out = (const char *)res.out.data;
	len = res.out.len;
	if (res.timed_out) {
		snprintf(reply->message, sizeof(reply->message),
		         "the supervisor's %s did not answer within %u s",
		         args[0], timeout_ms / 1000);
		goto out;
	}
	if (out && tb_task_record_parse(out, len, task_id, &reply->rec, perr,
	                                sizeof(perr)) == 0) {
		reply->outcome = TB_SUP_RECORD;
		goto out;
	}
	if (out &&
	    tb_sup_error_parse(out, len, reply->message, sizeof(reply->message),
	                       reply->code, sizeof(reply->code)) == 0) {
		/* An internal error may strike after the task started. */
		if (strcmp(reply->code, "internal") != 0)
			reply->outcome = TB_SUP_REFUSED;
		goto out;
	}
	snprintf(reply->message, sizeof(reply->message),
	         "the supervisor's %s exited with %d and printed no usable "
	         "record (%.400s)%s%.*s",
	         args[0], res.exit_code, out ? perr : "no output",
	         res.err.len ? ": " : "",
	         (int)(res.err.len > 300 ? 300 : res.err.len),
	         res.err.data ? (const char *)res.err.data : "");
out:
	tb_exec_result_free(&res);
}

void tb_sup_start(struct tb_box *box, const struct tb_sup_start_req *req,
                  struct tb_sup_reply *reply)
{
	char timeout[16], rows[16], cols[16];
	const char *argv[VERB_ARGS_MAX];
	int n = 0;

	snprintf(timeout, sizeof(timeout), "%u", req->timeout_s);
	argv[n++] = "start";
	argv[n++] = "--root";
	argv[n++] = TB_TASK_ROOT;
	argv[n++] = "--id";
	argv[n++] = req->task_id;
	argv[n++] = "--timeout";
	argv[n++] = timeout;
	if (req->cwd) {
		argv[n++] = "--cwd";
		argv[n++] = req->cwd;
	}
	if (req->stdin_mode && strcmp(req->stdin_mode, "null") != 0) {
		argv[n++] = "--stdin";
		argv[n++] = req->stdin_mode;
	}
	if (req->rows && req->cols) {
		snprintf(rows, sizeof(rows), "%u", req->rows);
		snprintf(cols, sizeof(cols), "%u", req->cols);
		argv[n++] = "--rows";
		argv[n++] = rows;
		argv[n++] = "--cols";
		argv[n++] = cols;
	}
	if (req->key) {
		argv[n++] = "--key";
		argv[n++] = req->key;
	}
	if (req->key && req->request) {
		argv[n++] = "--request";
		argv[n++] = req->request;
	}
	argv[n++] = "--command";
	argv[n++] = req->command;
	argv[n] = NULL;
	/* A key's task may be another one than asked for. */
	run_verb(box, argv, req->key ? NULL : req->task_id, VERB_TIMEOUT_MS,
	         NULL, reply);
}

/* How a verb that prints an object runs: its time, what stops it early,
 * its stdin (may be NULL) and the bytes of output kept. */
struct object_run {
	uint32_t timeout_ms;
	const struct tb_sup_stop *stop;
	const struct taskbox_buf *in;
	size_t output_limit;
};

/* Runs a verb that prints an object other than a record (write, resize,
 * watch) as RUN says: returns it (new), or NULL with reply's outcome and
 * message set. */
static json_t *run_verb_object(struct tb_box *box, const char *const *args,
                               const struct object_run *run,
                               struct tb_sup_reply *reply)
{
	struct taskbox_exec_result res;
	json_t *obj = NULL;
	int never_ran;

	memset(reply, 0, sizeof(*reply));
	reply->outcome = TB_SUP_UNSURE;
	if (exec_verb(box, args, run->timeout_ms, run->stop, run->in,
	              run->output_limit, &res, &never_ran, reply->message,
	              sizeof(reply->message)) != TASKBOX_OK) {
		if (never_ran)
			refuse_unsupported(reply);
		goto out;
	}
	if (res.timed_out) {
		snprintf(reply->message, sizeof(reply->message),
		         "the supervisor's %s did not answer within %u s",
		         args[0], run->timeout_ms / 1000);
		goto out;
	}
	if (res.out.data &&
	    tb_sup_error_parse((const char *)res.out.data, res.out.len,
	                       reply->message, sizeof(reply->message),
	                       reply->code, sizeof(reply->code)) == 0) {
		if (strcmp(reply->code, "internal") != 0)
			reply->outcome = TB_SUP_REFUSED;
		goto out;
	}
	if (res.out.data)
		obj = json_loadb((const char *)res.out.data, res.out.len, 0,
		                 NULL);
	if (!json_is_object(obj)) {
		json_decref(obj);
		obj = NULL;
		snprintf(reply->message, sizeof(reply->message),
		         "the supervisor's %s exited with %d and printed no "
		         "usable answer",
		         args[0], res.exit_code);
	}
out:
	tb_exec_result_free(&res);
	return obj;
}

int tb_sup_write(struct tb_box *box, const char *task_id,
                 const unsigned char *data, size_t len, bool eof,
                 size_t *written, bool *eof_done, struct tb_sup_reply *reply)
{
	const char *argv[] = {"write", "--root", TB_TASK_ROOT,    "--id",
	                      task_id, "--eof",  eof ? "1" : "0", "--data",
	                      NULL,    NULL};
	/* Typed input never shows in a command line where other sandboxes'
	 * processes may read it (/proc/PID/cmdline): it goes on the verb's
	 * stdin where the provider can; else only the sandbox's own
	 * processes see its command line. */
	struct taskbox_buf in = {(unsigned char *)data, len};
	int by_stdin =
	    (box->inst->plugin->features & TASKBOX_FEATURE_EXEC_STDIN) != 0;
	json_int_t n;
	char *b64 = NULL;
	json_t *obj;

	if (by_stdin)
		argv[8] = "-";
	else if ((b64 = tb_base64_encode(data, len, NULL)) == NULL) {
		memset(reply, 0, sizeof(*reply));
		reply->outcome = TB_SUP_UNSURE;
		snprintf(reply->message, sizeof(reply->message),
		         "out of memory encoding the data");
		return -1;
	} else if (len == 0)
		argv[7] = NULL; /* no --data */
	else
		argv[8] = b64;
	struct object_run run = {VERB_TIMEOUT_MS, NULL, by_stdin ? &in : NULL,
	                         VERB_OUTPUT_LIMIT};

	obj = run_verb_object(box, argv, &run, reply);
	free(b64);
	if (obj == NULL)
		return -1;
	n = json_integer_value(json_object_get(obj, "written"));
	if (!json_is_integer(json_object_get(obj, "written")) || n < 0 ||
	    (size_t)n > len) {
		snprintf(reply->message, sizeof(reply->message),
		         "the supervisor's write answered no byte count");
		json_decref(obj);
		return -1;
	}
	*written = (size_t)n;
	*eof_done = json_is_true(json_object_get(obj, "eof"));
	json_decref(obj);
	return 0;
}

int tb_sup_resize(struct tb_box *box, const char *task_id, unsigned rows,
                  unsigned cols, struct tb_sup_reply *reply)
{
	char r[16], c[16];
	const char *argv[] = {"resize", "--root", TB_TASK_ROOT, "--id", task_id,
	                      "--rows", r,        "--cols",     c,      NULL};
	json_t *obj;

	snprintf(r, sizeof(r), "%u", rows);
	struct object_run run = {VERB_TIMEOUT_MS, NULL, NULL,
	                         VERB_OUTPUT_LIMIT};

	snprintf(c, sizeof(c), "%u", cols);
	obj = run_verb_object(box, argv, &run, reply);
	if (obj == NULL)
		return -1;
	json_decref(obj);
	return 0;
}

int tb_sup_list(struct tb_box *box, json_t **tasks, char *err, size_t errlen)
{
	const char *argv[] = {"list", "--root", TB_TASK_ROOT, NULL};
	struct taskbox_exec_result res;
	char msg[TB_ERR_MAX], code[16];
	json_t *doc = NULL;
	int rc;

	*tasks = NULL;
	rc = exec_verb(box, argv, VERB_TIMEOUT_MS, NULL, NULL,
	               VERB_OUTPUT_LIMIT, &res, NULL, err, errlen);
	if (rc != TASKBOX_OK)
		goto out;
	if (res.timed_out) {
		snprintf(err, errlen,
		         "the supervisor's list did not answer within %u s",
		         VERB_TIMEOUT_MS / 1000);
		goto out;
	}
	if (res.out.data &&
	    tb_sup_error_parse((const char *)res.out.data, res.out.len, msg,
	                       sizeof(msg), code, sizeof(code)) == 0) {
		snprintf(err, errlen, "the supervisor's list refused: %s", msg);
		goto out;
	}
	if (res.out.data)
		doc = json_loadb((const char *)res.out.data, res.out.len, 0,
		                 NULL);
	if (!json_is_array(json_object_get(doc, "tasks"))) {
		snprintf(err, errlen,
		         "the supervisor's list exited with %d and printed no "
		         "task list",
		         res.exit_code);
		goto out;
	}
	*tasks = json_incref(json_object_get(doc, "tasks"));
out:
	json_decref(doc);
	tb_exec_result_free(&res);
	return *tasks ? 0 : -1;
}

void tb_sup_cancel(struct tb_box *box, const char *task_id,
                   struct tb_sup_reply *reply)
{
	const char *argv[] = {"cancel", "--root", TB_TASK_ROOT, "--id",
	                      task_id,  "--wait", CANCEL_WAIT,  NULL};

	run_verb(box, argv, task_id, CANCEL_TIMEOUT_MS, NULL, reply);
}

void tb_sup_remove(struct tb_box *box, const char *task_id,
                   struct tb_sup_reply *reply)
{
	const char *argv[] = {"remove", "--root", TB_TASK_ROOT,
	                      "--id",   task_id,  NULL};

	run_verb(box, argv, task_id, VERB_TIMEOUT_MS, NULL, reply);
}

void tb_sup_wait(struct tb_box *box, const char *task_id,
                 const struct tb_sup_wait_req *req,
                 const struct tb_sup_stop *stop, struct tb_sup_reply *reply)
{
	char wait[16], out_at[24], err_at[24], limit[24], out_page[24],
	    err_page[24];
	const char *argv[VERB_ARGS_MAX] = {
	    "wait", "--root", TB_TASK_ROOT, "--id", task_id, "--wait", wait};
	int n = 7;

	snprintf(wait, sizeof(wait), "%u", req->wait_s);
	if (req->stdout_offset >= 0) {
		snprintf(out_at, sizeof(out_at), "%" PRId64,
		         req->stdout_offset);
		argv[n++] = "--stdout-offset";
		argv[n++] = out_at;
	}
	if (req->stderr_offset >= 0) {
		snprintf(err_at, sizeof(err_at), "%" PRId64,
		         req->stderr_offset);
		argv[n++] = "--stderr-offset";
		argv[n++] = err_at;
	}
	if (req->page_limit > 0) {
		snprintf(limit, sizeof(limit), "%zu", req->page_limit);
		snprintf(out_page, sizeof(out_page), "%" PRIu64,
		         req->stdout_page_offset);
		snprintf(err_page, sizeof(err_page), "%" PRIu64,
		         req->stderr_page_offset);
		argv[n++] = "--page-limit";
		argv[n++] = limit;
		argv[n++] = "--stdout-page-offset";
		argv[n++] = out_page;
		argv[n++] = "--stderr-page-offset";
		argv[n++] = err_page;
	}
	argv[n] = NULL;
	run_verb(box, argv, task_id, req->wait_s * 1000u + VERB_TIMEOUT_MS,
	         stop, reply);
}

json_t *tb_sup_watch(struct tb_box *box, const char *tasks, unsigned wait_s,
                     const char *lease, uint64_t generation,
                     const struct tb_sup_stop *stop, struct tb_sup_reply *reply)
{
	char wait[16], gen[24];
	const char *argv[] = {"watch", "--root",  TB_TASK_ROOT, "--wait",
	                      wait,    "--lease", lease,        "--generation",
	                      gen,     "--tasks", tasks,        NULL};
	struct object_run run = {wait_s * 1000u + VERB_TIMEOUT_MS, stop, NULL,
	                         WATCH_OUTPUT_LIMIT};
	json_t *obj;

	snprintf(wait, sizeof(wait), "%u", wait_s);
	snprintf(gen, sizeof(gen), "%" PRIu64, generation);
	obj = run_verb_object(box, argv, &run, reply);
	if (obj && !json_is_array(json_object_get(obj, "answers"))) {
		snprintf(reply->message, sizeof(reply->message),
		         "the supervisor's watch answered no \"answers\"");
		json_decref(obj);
		obj = NULL;
	}
	return obj;
}

/* One page of a wait's answer: the member NAME of rec's answer, which
 * must be at offset with at most limit bytes. 0, or -1. */
static int answer_page(const struct tb_task_record *rec, const char *name,
                       uint64_t offset, size_t limit,
                       struct taskbox_read_item *page)
{
	json_t *p = json_object_get(rec->json, name);
	json_t *data = json_object_get(p, "data");
	json_int_t at = json_integer_value(json_object_get(p, "offset"));
	json_int_t size = json_integer_value(json_object_get(p, "size"));
	unsigned char *bytes;
	size_t len;

	if (!json_is_string(data) || at < 0 || (uint64_t)at != offset ||
	    size < 0 ||
	    tb_base64_decode(json_string_value(data), json_string_length(data),
	                     &bytes, &len) < 0)
		return -1;
	if (len > limit || (uint64_t)size < offset + len) {
		free(bytes);
		return -1;
	}
	memset(page, 0, sizeof *page);
	page->struct_size = sizeof *page;
	page->offset = offset;
	page->length = limit;
	page->status = TASKBOX_OK;
	page->data.data = bytes;
	page->data.len = len;
	page->file_size = (uint64_t)size;
	return 0;
}

int tb_sup_wait_pages(const struct tb_task_record *rec,
                      const struct tb_sup_wait_req *req,
                      struct taskbox_read_item page[2])
{
	if (req->page_limit == 0 ||
	    answer_page(rec, "stdout_page", req->stdout_page_offset,
	                req->page_limit, &page[0]) < 0)
		return -1;
	if (answer_page(rec, "stderr_page", req->stderr_page_offset,
	                req->page_limit, &page[1]) < 0) {
		tb_buf_free(&page[0].data);
		return -1;
	}
	return 0;
}

const char *tb_sup_task_path(char *buf, size_t len, const char *task_id,
                             const char *name)
{
	snprintf(buf, len, TB_TASK_ROOT "/%s/%s", task_id, name);
	return buf;
}

int tb_sup_parse_status(const struct tb_box *box, const char *task_id,
                        const struct taskbox_buf *data,
                        struct tb_task_record *rec, char *err, size_t errlen)
{
	char perr[TB_ERR_MAX];

	if (data->len == 0 ||
	    tb_record_cache_parse((const char *)data->data, data->len, task_id,
	                          rec, perr, sizeof(perr)) < 0) {
		snprintf(err, errlen, "sandbox %s: task %s: %s", box->id,
		         task_id, data->len ? perr : "status record is empty");
		return TASKBOX_E_PROTOCOL;
	}
	return TASKBOX_OK;
}

int tb_sup_read_status(struct tb_box *box, const char *task_id,
                       struct tb_task_record *rec, char *err, size_t errlen)
{
	char path[128];
	struct taskbox_buf data;
	uint64_t size;
	int rc;

	memset(rec, 0, sizeof(*rec));
	tb_sup_task_path(path, sizeof(path), task_id, "status.json");
	rc =
	    tb_box_read(box, path, 0, TB_STATUS_MAX, &data, &size, err, errlen);
	if (rc == TASKBOX_OK)
		rc = tb_sup_parse_status(box, task_id, &data, rec, err, errlen);
	tb_buf_free(&data);
	return rc;
}

int tb_sup_task_dir_exists(struct tb_box *box, const char *task_id, char *err,
                           size_t errlen)
{
	char dir[128];
	const char *argv[] = {"test", "-d", dir, NULL};
	struct taskbox_exec_result res;
	int rc;

	snprintf(dir, sizeof(dir), TB_TASK_ROOT "/%s", task_id);
	rc = tb_box_exec(box, argv, NULL, 10000, 4096, NULL, NULL, &res, err,
	                 errlen);
	if (rc == TASKBOX_OK && !res.timed_out &&
	    (res.exit_code == 0 || res.exit_code == 1)) {
		rc = res.exit_code == 0;
	} else {
		if (rc == TASKBOX_OK)
			snprintf(err, errlen,
			         "sandbox %s: could not check for task %s",
			         box->id, task_id);
		rc = -1;
	}
	tb_exec_result_free(&res);
	return rc;
}

/* Reads /proc/PID/stat through exec; returns like tb_sup_alive. */
static int stat_by_exec(struct tb_box *box, const char *path,
                        const struct tb_task_record *rec, char *err,
                        size_t errlen)
{
	const char *argv[] = {"cat", path, NULL};
	struct taskbox_exec_result res;
	int rc;

	rc = tb_box_exec(box, argv, NULL, 10000, STAT_MAX, NULL, NULL, &res,
	                 err, errlen);
	if (rc != TASKBOX_OK || res.timed_out) {
		if (rc == TASKBOX_OK)
			snprintf(err, errlen,
			         "sandbox %s: reading %s timed out", box->id,
			         path);
		rc = -1;
	} else if (res.exit_code != 0 || res.out.len == 0) {
		rc = 0; /* no such process */
	} else {
		rc = tb_proc_stat_is_live((const char *)res.out.data,
		                          res.out.len, rec->supervisor_start);
		if (rc < 0)
			snprintf(err, errlen, "sandbox %s: %s is malformed",
			         box->id, path);
	}
	tb_exec_result_free(&res);
	return rc;
}

/* Reads /proc/PID/stat of the record's supervisor: with read_file, else
 * with exec. Returns like tb_sup_alive. */
static int stat_says_alive(struct tb_box *box, const struct tb_task_record *rec,
                           char *err, size_t errlen)
{
	char path[64], rerr[TB_ERR_MAX];
	struct taskbox_buf data;
	uint64_t size;
	int rc, live;

	snprintf(path, sizeof(path), "/proc/%" PRId64 "/stat",
	         rec->supervisor_pid);
	rc = tb_box_read(box, path, 0, STAT_MAX, &data, &size, rerr,
	                 sizeof(rerr));
	if (rc == TASKBOX_OK && data.len > 0) {
		live = tb_proc_stat_is_live((const char *)data.data, data.len,
		                            rec->supervisor_start);
		if (live >= 0) {
			tb_buf_free(&data);
			return live;
		}
	}
	tb_buf_free(&data);
	/* Missing, empty or unreadable through the file API: some providers
	 * cannot serve procfs there, so ask the sandbox itself once. */
	tb_log(TB_LOG_DEBUG, "sandbox %s: %s through read_file: %s", box->id,
	       path, rc == TASKBOX_OK ? "empty or malformed" : rerr);
	return stat_by_exec(box, path, rec, err, errlen);
}

int tb_sup_alive(struct tb_box *box, const struct tb_task_record *rec,
                 char *err, size_t errlen)
{
	int64_t pid = rec->supervisor_pid;
	uint64_t start = rec->supervisor_start;
	int live, fd = -1;

	if (box->inst->plugin->features & TASKBOX_FEATURE_HOST_PIDS) {
		if ((live = tb_pid_watch_check(pid, start)) >= 0)
			return live;
		fd = tb_pid_watch_open(pid);
		if (fd < 0 && errno == ESRCH)
			return 0; /* no such process here, nor in the sandbox */
	}
	live = stat_says_alive(box, rec, err, errlen);
	if (fd >= 0 && live == 1)
		tb_pid_watch_keep(pid, start, fd);
	else if (fd >= 0)
		close(fd);
	return live;
}

/* Tasks whose orphaned group this process already killed, so polling a
 * lost task does not run the cancel verb again and again. */
static struct tb_task_ring reaped = TB_TASK_RING_INIT;

int tb_sup_reap_orphans(struct tb_box *box, const char *task_id)
{
	struct tb_sup_reply reply;

	if (!tb_task_ring_add(&reaped, box->id, task_id))
		return 0;
	tb_sup_cancel(box, task_id, &reply);
	tb_sup_reply_clear(&reply);
	return 1;
}
