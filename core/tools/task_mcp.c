/* The MCP tasks utility over reconnectable tasks. An MCP task id is
 * "<sandbox_id>/<task_id>", the task's own handle, so it means the same
 * task to a fresh server process. start_task and run_command both start a
 * reconnectable task; tasks/result answers with the task's final view,
 * which satisfies both tools' output schemas. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/rpc_codes.h"
#include "tools/sandboxes.h"
#include "tasks/ownership.h"
#include "tasks/session.h"
#include "tasks/sup_client.h"
#include "tools/task_backend.h"
#include "tools/task_park.h"
#include "tasks/task_id.h"
#include "tasks/task_list.h"
#include "tasks/task_view.h"
#include "tasks/task_wait.h"
#include "tools/tasks.h"
#include "tools/tool_args.h"

#define POLL_INTERVAL_MS 500
#define LIST_PAGE 50
#define RESULT_PAGE 65536
#define RUN_DEFAULT_TIMEOUT 60
#define SEEN_MAX 64

/* Sandboxes whose tasks this process was asked about: tasks/list shows
 * their tasks beside those of the sandboxes created here. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char seen[SEEN_MAX][TB_SANDBOX_REF_MAX];
static size_t n_seen, next_seen;

static void note_seen(const char *sandbox_id)
{
	pthread_mutex_lock(&seen_lock);
	for (size_t i = 0; i < n_seen; i++)
		if (strcmp(seen[i], sandbox_id) == 0)
			goto out;
	snprintf(seen[next_seen], TB_SANDBOX_REF_MAX, "%s", sandbox_id);
	next_seen = (next_seen + 1) % SEEN_MAX;
	if (n_seen < SEEN_MAX)
		n_seen++;
out:
	pthread_mutex_unlock(&seen_lock);
}

struct handle {
	char sandbox_id[TB_SANDBOX_REF_MAX];
	char task_id[TB_TASK_ID_LEN + 1];
};

/* Splits an MCP task id into its handle. */
static int parse_id(const char *id, struct handle *h, char *err, size_t errlen)
{
	const char *slash = id ? strrchr(id, '/') : NULL;
	size_t sb_len = slash ? (size_t)(slash - id) : 0;

	if (!slash || sb_len == 0 || sb_len >= sizeof(h->sandbox_id) ||
	    strlen(slash + 1) != TB_TASK_ID_LEN ||
	    !tb_task_id_valid(slash + 1)) {
		snprintf(err, errlen,
		         "Failed to retrieve task: taskId '%.200s' is not one "
		         "this server gives (\"<sandbox_id>/<task_id>\")",
		         id ? id : "");
		return TB_RPC_INVALID_PARAMS;
	}
	memcpy(h->sandbox_id, id, sb_len);
	h->sandbox_id[sb_len] = '\0';
	memcpy(h->task_id, slash + 1, TB_TASK_ID_LEN + 1);
	return 0;
}

static json_t *iso_time(json_t *unix_s)
{
	time_t t = json_is_integer(unix_s) ? (time_t)json_integer_value(unix_s)
	                                   : time(NULL);
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

/* The spec's status for one of ours, and the message that goes with it. */
static const char *mcp_status(const char *state, json_t *view, char *msg,
                              size_t msglen)
{
	const char *error = json_string_value(json_object_get(view, "error"));
	json_t *code = json_object_get(view, "exit_code");

	if (strcmp(state, "running") == 0) {
		snprintf(msg, msglen, "running%s%s", error ? ": " : "",
		         error ? error : "");
		return "working";
	}
	if (strcmp(state, "succeeded") == 0) {
		snprintf(msg, msglen, "succeeded: exit code 0");
		return "completed";
	}
	if (strcmp(state, "cancelled") == 0) {
		snprintf(msg, msglen, "cancelled");
		return "cancelled";
	}
	if (strcmp(state, "failed") == 0 && json_is_integer(code))
		snprintf(msg, msglen, "failed: exit code %" JSON_INTEGER_FORMAT,
		         json_integer_value(code));
	else if (strcmp(state, "timed_out") == 0)
		snprintf(msg, msglen,
		         "timed_out: the command ran past its timeout and was "
		         "killed");
	else
		snprintf(msg, msglen, "%s: %s", state,
		         error ? error : "no reason recorded");
	return "failed";
}

/* A Task object from a view or start result of the task h. */
static json_t *task_object(const struct handle *h, json_t *view)
{
	const char *state = json_string_value(json_object_get(view, "state"));
	char id[TB_SANDBOX_REF_MAX + TB_TASK_ID_LEN + 2], msg[1200];
	json_t *finished = json_object_get(view, "finished_at");

	snprintf(id, sizeof id, "%s/%s", h->sandbox_id, h->task_id);
	const char *status =
	    mcp_status(state ? state : "unknown", view, msg, sizeof msg);
	return json_pack("{s:s,s:s,s:s,s:o,s:o,s:n,s:i}", "taskId", id,
	                 "status", status, "statusMessage", msg, "createdAt",
	                 iso_time(json_object_get(view, "started_at")),
	                 "lastUpdatedAt",
	                 iso_time(json_is_integer(finished)
	                              ? finished
	                              : json_object_get(view, "started_at")),
	                 "ttl", "pollInterval", POLL_INTERVAL_MS);
}

/* Views the task in box (open) (one byte of each log unless it waits:
 * the state is what counts here). Returns 0 with *view, or a JSON-RPC
 * error code with err. */
static int view_in(tb_call *call, struct tb_box *box, const char *task_id,
                   uint32_t wait_ms, json_t **view, char *err, size_t errlen)
{
	struct tb_page_req pr = {0, 0, wait_ms ? RESULT_PAGE : 1};
	struct tb_waiter waiter;

	tb_call_waiter(call, &waiter);
	int rc = tb_task_wait(&waiter, box, task_id, &pr, NULL, wait_ms,
	                      TB_WAIT_TERMINAL, view);

	if (rc == 0)
		return 0;
	snprintf(err, errlen, "Failed to retrieve task: %s",
	         json_string_value(json_object_get(*view, "error")));
	json_decref(*view);
	*view = NULL;
	return TB_RPC_INVALID_PARAMS;
}

/* Opens the task's sandbox into box. Returns 0 or a JSON-RPC error. */
static int open_box(tb_call *call, const struct handle *h, struct tb_box *box,
                    char *err, size_t errlen)
{
	if (tb_call_open_box(call, h->sandbox_id, "taskId", box, err, errlen) !=
	    TASKBOX_OK)
		return TB_RPC_INVALID_PARAMS;
	note_seen(box->id);
	return 0;
}

/* parse_id, then open_box. Returns 0 or a JSON-RPC error. */
static int open_task(tb_call *call, const char *task_id, struct handle *h,
                     struct tb_box *box, char *err, size_t errlen)
{
	int rc = parse_id(task_id, h, err, errlen);

	return rc ? rc : open_box(call, h, box, err, errlen);
}

/* view_in, in the task's sandbox opened for the call. */
static int view_task(tb_call *call, const struct handle *h, uint32_t wait_ms,
                     json_t **view, char *err, size_t errlen)
{
	struct tb_box box;
	int rc;

	*view = NULL;
	rc = open_box(call, h, &box, err, errlen);
	if (rc != 0)
		return rc;
	rc = view_in(call, &box, h->task_id, wait_ms, view, err, errlen);
	tb_box_close(&box);
	return rc;
}

/* parse_id, then view_task. */
static int view_by_id(tb_call *call, const char *task_id, uint32_t wait_ms,
                      struct handle *h, json_t **view, char *err, size_t errlen)
{
	int rc = parse_id(task_id, h, err, errlen);

	return rc ? rc : view_task(call, h, wait_ms, view, err, errlen);
}

static int create(tb_call *call, const struct tb_tool *tool, json_t *args,
                  json_t **out, char *err, size_t errlen)
{
	char id[TB_SANDBOX_REF_MAX];
	struct handle h;
	json_t *started = NULL;

	if (strcmp(tool->name, "run_command") == 0) {
		/* run_command's defaults: its timeout, a sandbox made for the
		 * session when there is none. */
		if (tb_sandbox_for_call(call, args, true, id, sizeof id, err,
		                        errlen) < 0)
			return TB_RPC_INVALID_PARAMS;
		json_object_set_new(args, "sandbox_id", json_string(id));
		if (!json_object_get(args, "timeout"))
			json_object_set_new(args, "timeout",
			                    json_integer(RUN_DEFAULT_TIMEOUT));
	} else if (strcmp(tool->name, "start_task") != 0) {
		snprintf(err, errlen, "tool %s cannot run as a task",
		         tool->name);
		return TB_RPC_METHOD_NOT_FOUND;
	}
	if (tb_start_task(call, args, &started) != 0) {
		snprintf(err, errlen, "Invalid params: %s",
		         json_string_value(json_object_get(started, "error")));
		json_decref(started);
		return TB_RPC_INVALID_PARAMS;
	}
	snprintf(h.sandbox_id, sizeof h.sandbox_id, "%s",
	         json_string_value(json_object_get(started, "sandbox_id")));
	snprintf(h.task_id, sizeof h.task_id, "%s",
	         json_string_value(json_object_get(started, "task_id")));
	note_seen(h.sandbox_id);
	*out = task_object(&h, started);
	json_decref(started);
	return 0;
}

static int get(tb_call *call, const char *task_id, json_t **out, char *err,
               size_t errlen)
{
	struct handle h;
	json_t *view;
	int rc = view_by_id(call, task_id, 0, &h, &view, err, errlen);

	if (rc != 0)
		return rc;
	*out = task_object(&h, view);
	json_decref(view);
	return 0;
}

/* Blocks until the task ends; the result is the final view plus
 * timed_out, with up to 64 KiB of each log. */
static int result_end(tb_call *call, int rc, json_t *view, json_t **out,
                      bool *is_error, char *err, size_t errlen)
{
	if (rc != 0) {
		snprintf(err, errlen, "Failed to retrieve task: %s",
		         json_string_value(json_object_get(view, "error")));
		json_decref(view);
		return TB_RPC_INVALID_PARAMS;
	}
	if (tb_call_cancelled(call)) {
		json_decref(view);
		snprintf(err, errlen, "tasks/result was cancelled");
		return TB_RPC_INTERNAL_ERROR;
	}
	const char *state = json_string_value(json_object_get(view, "state"));
	json_object_set_new(view, "timed_out",
	                    json_boolean(state && !strcmp(state, "timed_out")));
	*is_error = !state || strcmp(state, "succeeded") != 0;
	*out = view;
	return 0;
}

/* Waits for the task's end with the call parked between the steps. */
static int result(tb_call *call, const char *task_id, json_t **out,
                  bool *is_error, char *err, size_t errlen)
{
	struct tb_page_req pr = {0, 0, RESULT_PAGE};
	struct handle h;
	struct tb_box box;
	json_t *view = NULL;
	int rc = open_task(call, task_id, &h, &box, err, errlen);

	if (rc != 0)
		return rc;
	rc = tb_parked_task_wait(call, &box, h.task_id, &pr, NULL,
	                         TB_WAIT_FOREVER, TB_WAIT_TERMINAL, &view);
	if (rc == TB_TOOL_PARKED)
		return rc;
	return result_end(call, rc, view, out, is_error, err, errlen);
}

static int cancel(tb_call *call, const char *task_id, json_t **out, char *err,
                  size_t errlen)
{
	struct tb_sup_reply reply;
	struct tb_box box;
	struct handle h;
	json_t *view = NULL;
	int rc = open_task(call, task_id, &h, &box, err, errlen);

	if (rc != 0)
		return rc;
	rc = view_in(call, &box, h.task_id, 0, &view, err, errlen);
	if (rc != 0)
		goto out;
	const char *state = json_string_value(json_object_get(view, "state"));
	if (!state || strcmp(state, "running") != 0) {
		char msg[1200];
		snprintf(err, errlen,
		         "Cannot cancel task %s: it is already %s (%s)",
		         task_id,
		         mcp_status(state ? state : "unknown", view, msg,
		                    sizeof msg),
		         msg);
		rc = TB_RPC_INVALID_PARAMS;
		goto out;
	}
	json_decref(view);
	view = NULL;
	tb_sup_cancel(&box, h.task_id, &reply);
	tb_sup_reply_clear(&reply);
	rc = view_in(call, &box, h.task_id, 0, &view, err, errlen);
	if (rc == 0)
		*out = task_object(&h, view);
out:
	json_decref(view);
	tb_box_close(&box);
	return rc;
}

static int list(tb_call *call, const char *cursor, json_t **out, char *err,
                size_t errlen)
{
	static char ids[2 * SEEN_MAX][TB_SANDBOX_REF_MAX];
	static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
	char next[TB_LIST_CURSOR_MAX];
	json_t *all = json_array(), *page, *tasks = json_array(), *e;
	size_t n, i;

	pthread_mutex_lock(&ids_lock);
	n = tb_session_ids(tb_call_session(call), ids, SEEN_MAX);
	pthread_mutex_lock(&seen_lock);
	for (i = 0; i < n_seen; i++) {
		size_t j = 0;
		while (j < n && strcmp(ids[j], seen[i]) != 0)
			j++;
		if (j == n)
			memcpy(ids[n++], seen[i], TB_SANDBOX_REF_MAX);
	}
	pthread_mutex_unlock(&seen_lock);
	for (i = 0; i < n; i++) {
		struct tb_box box;
		char why[TB_ERR_MAX];
		json_t *one;

		/* A sandbox that is gone has no tasks left to show. */
		if (tb_box_open_as(ids[i], "sandbox_id", call->principal, &box,
		                   why, sizeof why) != TASKBOX_OK)
			continue;
		if (tb_task_list(&box, &one, why, sizeof why) == 0) {
			json_array_extend(all, one);
			json_decref(one);
		}
		tb_box_close(&box);
	}
	pthread_mutex_unlock(&ids_lock);
	tb_task_list_sort(all);
	if (tb_task_list_page(all, NULL, cursor, LIST_PAGE, &page, next) < 0) {
		json_decref(all);
		json_decref(tasks);
		snprintf(err, errlen,
		         "Invalid params: field 'cursor' is not a nextCursor "
		         "this server gave");
		return TB_RPC_INVALID_PARAMS;
	}
	json_decref(all);
	json_array_foreach(page, i, e)
	{
		struct handle h;
		snprintf(h.sandbox_id, sizeof h.sandbox_id, "%s",
		         json_string_value(json_object_get(e, "sandbox_id")));
		snprintf(h.task_id, sizeof h.task_id, "%s",
		         json_string_value(json_object_get(e, "task_id")));
		json_array_append_new(tasks, task_object(&h, e));
	}
	json_decref(page);
	*out = json_pack("{s:o}", "tasks", tasks);
	if (*out && next[0])
		json_object_set_new(*out, "nextCursor", json_string(next));
	return 0;
}

static const struct tb_task_backend backend = {
    .create = create,
    .get = get,
    .result = result,
    .result_end = result_end,
    .list = list,
    .cancel = cancel,
};

int tb_task_backend_register(void)
{
	tb_task_backend_set(&backend);
	return 0;
}
