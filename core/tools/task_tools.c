/* start_task, get_task, cancel_task and remove_task. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/principal.h"
#include "tasks/key_request.h"
#include "tasks/session.h"
#include "tasks/sup_client.h"
#include "tasks/task_id.h"
#include "tasks/task_ring.h"
#include "tools/tool_stats.h"
#include "tools/task_schemas.h"
#include "tasks/task_view.h"
#include "tasks/task_wait.h"
#include "tools/sandboxes.h"
#include "tools/task_park.h"
#include "tools/tasks.h"
#include "tools/task_input.h"
#include "tools/tool.h"
#include "tools/tool_args.h"
#include "host/sandbox_ref.h"

/* Encoded command + cwd, as JSON with every non-ASCII character escaped,
 * may not exceed this before anything reaches a provider. */
#define ENCODED_CAP (96 * 1024)
#define LOG_MAX 1048576

#define PAGE_PROPS                                                             \
	"\"stdout_offset\":{\"type\":\"integer\",\"minimum\":0,"               \
	"\"maximum\":1048576,\"default\":0,\"description\":\"Byte offset in "  \
	"stdout to read from: pass the stdout_next_offset of the last "        \
	"result.\"},"                                                          \
	"\"stderr_offset\":{\"type\":\"integer\",\"minimum\":0,"               \
	"\"maximum\":1048576,\"default\":0,\"description\":\"Byte offset in "  \
	"stderr, like stdout_offset.\"},"                                      \
	"\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":65536,"     \
	"\"default\":16384,\"description\":\"Bytes per stream to return.\"},"  \
	"\"wait\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":60,"         \
	"\"default\":0,\"description\":\"Seconds to wait for a change "        \
	"before answering (see the tool's description); 0 answers at "         \
	"once.\"}"

#define NULLABLE_INT "{\"type\":[\"integer\",\"null\"]}"
#define TASK_FIELD_PROPS                                                       \
	"\"sandbox_id\":{\"type\":\"string\"},"                                \
	"\"task_id\":{\"type\":\"string\"},"                                   \
	"\"state\":" STATE_SCHEMA ","                                          \
	"\"exit_code\":" NULLABLE_INT ","                                      \
	"\"started_at\":" NULLABLE_INT ","                                     \
	"\"finished_at\":" NULLABLE_INT ","                                    \
	"\"command\":{\"type\":[\"string\",\"null\"]},"                        \
	"\"error\":{\"type\":[\"string\",\"null\"]}," TASK_INPUT_PROPS
#define TASK_FIELD_NAMES                                                       \
	"\"sandbox_id\",\"task_id\",\"state\",\"exit_code\",\"started_at\","   \
	"\"finished_at\",\"command\",\"error\"," TASK_INPUT_NAMES

static const char start_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"command\"],\"properties\":{"
    "\"command\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":65536,"
    "\"description\":\"Shell command line, run with /bin/sh -c.\"},"
    "\"sandbox_id\":" SANDBOX_ID_SCHEMA ","
    "\"cwd\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096,"
    "\"description\":\"Working directory, relative to the sandbox's "
    "home or absolute.\"},"
    "\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3600,"
    "\"default\":300,\"description\":\"Seconds before the task is "
    "killed (state timed_out).\"}," START_INPUT_PROPS "}}";

static const char start_output[] =
    "{\"type\":\"object\",\"properties\":{" TASK_FIELD_PROPS ","
    "\"reused\":{\"type\":\"boolean\"}},"
    "\"required\":[" TASK_FIELD_NAMES "]}";

static const char view_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"sandbox_id\",\"task_id\"],\"properties\":{"
    "\"sandbox_id\":" SANDBOX_ID_SCHEMA ",\"task_id\":" TASK_ID_SCHEMA
    "," PAGE_PROPS "}}";

static const char view_output[] =
    "{\"type\":\"object\",\"properties\":{" TASK_FIELD_PROPS ","
    "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
    "\"stdout_next_offset\":{\"type\":\"integer\"},"
    "\"stderr_next_offset\":{\"type\":\"integer\"},"
    "\"stdout_size\":{\"type\":\"integer\"},"
    "\"stderr_size\":{\"type\":\"integer\"},"
    "\"stdout_truncated\":{\"type\":\"boolean\"},"
    "\"stderr_truncated\":{\"type\":\"boolean\"}},"
    "\"required\":[" TASK_FIELD_NAMES ",\"stdout\",\"stderr\","
    "\"stdout_next_offset\",\"stderr_next_offset\",\"stdout_size\","
    "\"stderr_size\",\"stdout_truncated\",\"stderr_truncated\"]}";

static const char remove_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"sandbox_id\",\"task_id\"],\"properties\":{"
    "\"sandbox_id\":" SANDBOX_ID_SCHEMA ",\"task_id\":" TASK_ID_SCHEMA "}}";

static const char remove_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandbox_id\":{\"type\":\"string\"},\"task_id\":{\"type\":\"string\"},"
    "\"state\":" STATE_SCHEMA ",\"removed\":{\"type\":\"boolean\"}},"
    "\"required\":[\"sandbox_id\",\"task_id\",\"state\",\"removed\"]}";

int tb_task_handle_args(json_t *args, const char **sandbox_id,
                        const char **task_id, char *err, size_t errlen)
{
	if (tb_arg_str(args, "sandbox_id", true, 3, 160, sandbox_id, err,
	               errlen) < 0 ||
	    tb_arg_str(args, "task_id", true, 32, 32, task_id, err, errlen) < 0)
		return -1;
	if (!tb_task_id_valid(*task_id)) {
		snprintf(
		    err, errlen,
		    "task_id: must be 32 lowercase hexadecimal characters");
		return -1;
	}
	return 0;
}

/* start_task's answer to reply (not a refusal) on box, still open: the
 * record's fields for a task started now; for a key's earlier task, a
 * whole view of it as it is now (its record may name a supervisor that has
 * gone since), with reused set. NULL when out of memory. */
static json_t *start_result(struct tb_box *box, const char *task_id,
                            const struct tb_sup_reply *reply)
{
	static const struct tb_page_req first_page = {0, 0, 16384};
	bool reused = reply->outcome == TB_SUP_RECORD && reply->rec.existing;
	json_t *r = NULL;

	if (reused && tb_task_view(box, reply->rec.task_id, &first_page, NULL,
	                           &r, NULL)) {
		json_decref(r); /* a tool error: fall back on the record */
		r = NULL;
	}
	if (!reused)
		tb_tool_stats_task_started();
	if (reply->outcome == TB_SUP_RECORD &&
	    reply->rec.state == TB_TASK_RUNNING)
		tb_task_ring_add(&tb_tasks_seen_running, box->id,
		                 reply->rec.task_id);
	if (r == NULL && reply->outcome == TB_SUP_RECORD)
		r = tb_task_fields(box->id, reply->rec.task_id,
		                   reply->rec.state, &reply->rec,
		                   reply->rec.error);
	else if (r == NULL)
		r = tb_task_fields(box->id, task_id, TB_TASK_UNKNOWN, NULL,
		                   reply->message);
	if (r && json_object_set_new(r, "reused", json_boolean(reused))) {
		json_decref(r);
		r = NULL;
	}
	return r;
}

int tb_start_task(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {
	    "command", "sandbox_id", "cwd",  "timeout",         "stdin",
	    "tty",     "rows",       "cols", "idempotency_key", NULL};
	struct tb_sup_start_req req = {0};
	const char *command, *cwd, *sandbox_id;
	char err[TB_ERR_MAX], def[TB_SANDBOX_REF_MAX];
	char task_id[TB_TASK_ID_LEN + 1];
	char request[TB_KEY_REQUEST_LEN + 1], what[64];
	struct tb_sup_reply reply;
	struct tb_box box;
	int64_t timeout;
	int rc;

	(void)call;
	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_arg_str(args, "command", true, 1, 65536, &command, err,
	               sizeof(err)) < 0 ||
	    tb_arg_str(args, "cwd", false, 1, 4096, &cwd, err, sizeof(err)) <
	        0 ||
	    tb_arg_str(args, "sandbox_id", false, 3, 160, &sandbox_id, err,
	               sizeof(err)) < 0 ||
	    tb_arg_int(args, "timeout", 1, 3600, 300, &timeout, err,
	               sizeof(err)) < 0 ||
	    tb_start_input_args(args, &req, err, sizeof(err)) < 0)
		goto refuse;
	if (tb_json_ascii_len(command) + (cwd ? tb_json_ascii_len(cwd) : 0) >
	    ENCODED_CAP) {
		snprintf(err, sizeof(err),
		         "command: with cwd, more than %d bytes once "
		         "JSON-encoded (non-ASCII characters count 6 or 12 "
		         "bytes each)",
		         ENCODED_CAP);
		goto refuse;
	}
	if (sandbox_id == NULL) {
		if (!tb_call_session(call)) {
			snprintf(err, sizeof(err), "%s",
			         TB_SANDBOX_ID_REQUIRED);
			goto refuse;
		}
		if (!tb_session_default(tb_call_session(call), def,
		                        sizeof(def))) {
			snprintf(
			    err, sizeof(err),
			    "sandbox_id: not given, and this session has no "
			    "default sandbox; call create_sandbox first "
			    "(start_task never creates one)");
			goto refuse;
		}
		sandbox_id = def;
	}
	if (tb_box_resolve(sandbox_id, "sandbox_id", &box, err, sizeof(err)) <
	    0)
		goto refuse;
	if (tb_task_id_new(task_id) < 0) {
		snprintf(err, sizeof(err), "no randomness for a task id");
		goto refuse;
	}
	/* Retained from here on, whatever the outcome. */
	tb_session_retain(tb_call_session(call), box.id);
	rc = tb_call_connect_box(call, &box, err, sizeof(err));
	if (rc != TASKBOX_OK)
		goto refuse;
	req.task_id = task_id;
	req.command = command;
	req.cwd = cwd;
	req.timeout_s = (unsigned)timeout;
	if (req.key && tb_key_request(&req, request) < 0) {
		tb_box_close(&box);
		snprintf(err, sizeof(err),
		         "idempotency_key: the request's digest could not be "
		         "made");
		goto refuse;
	}
	req.request = req.key ? request : NULL;
	tb_sup_start(&box, &req, &reply);
	/* A key kept with another request's digest (keys kept before
	 * digests were are taken as they are). */
	if (reply.outcome == TB_SUP_RECORD && reply.rec.existing && req.key &&
	    reply.rec.request &&
	    tb_key_request_diff(reply.rec.request, request, what,
	                        sizeof(what)) == 1) {
		tb_box_close(&box);
		snprintf(err, sizeof(err),
		         "idempotency_key: %s was used for a different request "
		         "(task %s): %s differ%s; use a new key for a new "
		         "request",
		         req.key, reply.rec.task_id, what,
		         strchr(what, ' ') ? "" : "s");
		tb_sup_reply_clear(&reply);
		goto refuse;
	}
	if (reply.outcome == TB_SUP_REFUSED) {
		tb_box_close(&box);
		snprintf(err, sizeof(err), "sandbox %s: start refused: %.800s",
		         box.id, reply.message);
		tb_sup_reply_clear(&reply);
		goto refuse;
	}
	*result = start_result(&box, task_id, &reply);
	tb_box_close(&box);
	tb_sup_reply_clear(&reply);
	return tb_result_or_oom(result);
refuse:
	*result = tb_error_json(err);
	return 1;
}

/* The arguments of get_task and cancel_task, and their sandbox opened.
 * Returns 0; or 1 with the answer in *result (the sandbox is gone under a
 * task this process saw running: the task ended with it); or -1 with a
 * tool error in *result. */
static int view_open(tb_call *call, json_t *args, const char **task_id,
                     struct tb_page_req *pr, uint32_t *wait_ms,
                     struct tb_box *box, json_t **result)
{
	static const char *const known[] = {
	    "sandbox_id", "task_id", "stdout_offset", "stderr_offset", "limit",
	    "wait",       NULL};
	const char *sandbox_id;
	char err[TB_ERR_MAX];
	int64_t so, se, limit, wait;
	int rc;

	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_task_handle_args(args, &sandbox_id, task_id, err, sizeof(err)) <
	        0 ||
	    tb_arg_int(args, "stdout_offset", 0, LOG_MAX, 0, &so, err,
	               sizeof(err)) < 0 ||
	    tb_arg_int(args, "stderr_offset", 0, LOG_MAX, 0, &se, err,
	               sizeof(err)) < 0 ||
	    tb_arg_int(args, "limit", 1, 65536, 16384, &limit, err,
	               sizeof(err)) < 0 ||
	    tb_arg_int(args, "wait", 0, 60, 0, &wait, err, sizeof(err)) < 0) {
		*result = tb_error_json(err);
		return -1;
	}
	pr->stdout_offset = (uint64_t)so;
	pr->stderr_offset = (uint64_t)se;
	pr->limit = (size_t)limit;
	*wait_ms = (uint32_t)wait * 1000u;
	rc = tb_call_open_box(call, sandbox_id, "sandbox_id", box, err,
	                      sizeof(err));
	if (rc == TASKBOX_OK)
		return 0;
	/* Another's sandbox is answered as a missing one, not as one that
	 * went away under a task seen running. */
	*result = call->refusal
	              ? NULL
	              : tb_task_view_if_gone(rc, sandbox_id, *task_id, pr, err);
	if (*result)
		return 1;
	*result = tb_error_json(err);
	return -1;
}

static int get_task(tb_call *call, json_t *args, json_t **result)
{
	const char *task_id;
	struct tb_page_req pr;
	struct tb_box box;
	uint32_t wait_ms;
	int rc;

	if ((rc = view_open(call, args, &task_id, &pr, &wait_ms, &box, result)))
		return rc < 0;
	return tb_parked_task_wait(call, &box, task_id, &pr, NULL, wait_ms,
	                           TB_WAIT_CHANGE, result);
}

static int cancel_task(tb_call *call, json_t *args, json_t **result)
{
	const char *task_id;
	char note[TB_ERR_MAX + 128];
	struct tb_sup_reply reply;
	struct tb_page_req pr;
	struct tb_box box;
	uint32_t wait_ms;
	int rc;

	if ((rc = view_open(call, args, &task_id, &pr, &wait_ms, &box, result)))
		return rc < 0;
	tb_sup_cancel(&box, task_id, &reply);
	if (reply.outcome == TB_SUP_RECORD && reply.rec.supervisor_gone)
		snprintf(note, sizeof(note),
		         "cancellation is not confirmed: %s", TB_SUP_GONE_WHY);
	else if (reply.outcome == TB_SUP_RECORD)
		snprintf(note, sizeof(note),
		         "cancellation is not confirmed: the task was still "
		         "running after the 3 s wait%s",
		         wait_ms ? " and the given wait" : "");
	else
		snprintf(note, sizeof(note),
		         "cancellation is not confirmed: %s", reply.message);
	tb_sup_reply_clear(&reply);
	/* Only the end of the task confirms a cancellation: output that
	 * trails in meanwhile does not end this wait. */
	return tb_parked_task_wait(call, &box, task_id, &pr, note, wait_ms,
	                           TB_WAIT_TERMINAL, result);
}

/* True when the task's record says running but its supervisor is gone. */
static bool supervisor_lost(struct tb_box *box, const char *task_id)
{
	struct tb_task_record rec;
	char err[TB_ERR_MAX];
	bool lost = false;

	memset(&rec, 0, sizeof(rec));
	if (tb_sup_read_status(box, task_id, &rec, err, sizeof(err)) ==
	        TASKBOX_OK &&
	    rec.state == TB_TASK_RUNNING)
		lost = tb_sup_alive(box, &rec, err, sizeof(err)) == 0;
	tb_task_record_clear(&rec);
	return lost;
}

static int remove_task(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"sandbox_id", "task_id", NULL};
	const char *sandbox_id, *task_id;
	char err[TB_ERR_MAX];
	struct tb_sup_reply reply;
	struct tb_box box;

	(void)call;
	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_task_handle_args(args, &sandbox_id, &task_id, err, sizeof(err)) <
	        0 ||
	    tb_call_open_box(call, sandbox_id, "sandbox_id", &box, err,
	                     sizeof(err)) != TASKBOX_OK) {
		*result = tb_error_json(err);
		return 1;
	}
	tb_sup_remove(&box, task_id, &reply);
	if (reply.outcome == TB_SUP_REFUSED && !strcmp(reply.code, "running") &&
	    supervisor_lost(&box, task_id)) {
		/* What get_task calls unknown is removed like it: its orphaned
		 * group is killed first. */
		tb_sup_reply_clear(&reply);
		tb_sup_reap_orphans(&box, task_id);
		tb_sup_remove(&box, task_id, &reply);
	}
	/* A task whose start was interrupted before its first record leaves
	 * no record to print back: the directory being gone is the proof. */
	if (reply.outcome == TB_SUP_UNSURE &&
	    tb_sup_task_dir_exists(&box, task_id, err, sizeof(err)) == 0) {
		reply.outcome = TB_SUP_RECORD;
		reply.rec.state = TB_TASK_UNKNOWN;
	}
	tb_box_close(&box);
	if (reply.outcome != TB_SUP_RECORD) {
		if (strcmp(reply.code, "running") == 0)
			*result = tb_error_jsonf(
			    "task_id: task %s is still running; cancel_task it "
			    "first (%s)",
			    task_id, reply.message);
		else if (strcmp(reply.code, "not_found") == 0)
			*result =
			    tb_error_jsonf("task_id: no task %s in sandbox %s",
			                   task_id, box.id);
		else
			*result = tb_error_jsonf("sandbox %s: remove: %s",
			                         box.id, reply.message);
		tb_sup_reply_clear(&reply);
		return 1;
	}
	/* The verb removes a task whose record still says running only once
	 * its supervisor is gone: get_task calls that task unknown, and so
	 * does remove_task. */
	if (reply.rec.state == TB_TASK_RUNNING)
		reply.rec.state = TB_TASK_UNKNOWN;
	*result = json_pack("{s:s, s:s, s:s, s:b}", "sandbox_id", box.id,
	                    "task_id", task_id, "state",
	                    tb_task_state_name(reply.rec.state), "removed", 1);
	tb_sup_reply_clear(&reply);
	return 0;
}

static const struct tb_tool tools[] = {
    {
        .name = "start_task",
        .title = "Start a background task",
        .description =
            "Starts a shell command in the background inside a sandbox and "
            "returns its handle (sandbox_id + task_id) at once. Save both: "
            "with them get_task reads the task's state and output later, "
            "even from a new session or server process. Without sandbox_id "
            "the session's default sandbox (the newest one create_sandbox "
            "made) is used; call create_sandbox first. Starting a task "
            "keeps that sandbox alive after you disconnect; destroy it "
            "with kill_sandbox when done. state \"unknown\" means the "
            "submission's outcome is uncertain: inspect it with get_task "
            "or destroy the sandbox, never resubmit blindly. At most 128 "
            "tasks per sandbox; remove_task frees finished ones. Task "
            "tools never extend the sandbox's lifetime. Do not put secrets "
            "in the command.",
        .input_schema = start_input,
        .output_schema = start_output,
        .annotations = "{\"title\":\"Start a background task\","
                       "\"readOnlyHint\":false,\"destructiveHint\":false,"
                       "\"idempotentHint\":false,\"openWorldHint\":false}",
        .execution = "{\"taskSupport\":\"optional\"}",
        .fn = tb_start_task,
    },
    {
        .name = "get_task",
        .title = "Read a task's state and output",
        .description =
            "Reads a task's state (running, succeeded, failed, cancelled, "
            "timed_out, unknown), exit code, Unix start/finish times and one "
            "page of stdout and stderr. Pages are byte ranges: pass "
            "stdout_next_offset / stderr_next_offset from the last result "
            "as stdout_offset / stderr_offset to continue; the same offsets "
            "replay the same page. limit is bytes per stream (default 16384, "
            "max 65536). A task keeps at most 1 MiB per stream "
            "(stdout_truncated / stderr_truncated tell when more was "
            "discarded). failed with an exit_code is the command's own "
            "result; unknown means its supervisor vanished, so the outcome "
            "was never recorded. With wait (seconds, up to 60) the call "
            "answers as soon as the task is no longer running or has "
            "output past the given offsets, or when wait runs out, so one "
            "call replaces a polling loop: call again with the next offsets "
            "while state is running.",
        .input_schema = view_input,
        .output_schema = view_output,
        .annotations = "{\"title\":\"Read a task's state and output\","
                       "\"readOnlyHint\":true,\"openWorldHint\":false}",
        .scope = TB_SCOPE_READ,
        .fn = get_task,
    },
    {
        .name = "cancel_task",
        .title = "Cancel a task",
        .description =
            "Stops a running task: TERM, then KILL, to the task's own "
            "process group, waiting up to 3 seconds, then returns the same "
            "result as get_task. If the state is still running or unknown, "
            "the error says cancellation is not confirmed; wait (seconds, "
            "up to 60) waits that much longer for the task to end. "
            "Cancelling a "
            "finished task returns its saved outcome and signals nothing. "
            "Processes that left the task's group survive: kill_sandbox is "
            "the complete cleanup.",
        .input_schema = view_input,
        .output_schema = view_output,
        .annotations = "{\"title\":\"Cancel a task\",\"readOnlyHint\":false,"
                       "\"destructiveHint\":true,\"idempotentHint\":true,"
                       "\"openWorldHint\":false}",
        .fn = cancel_task,
    },
    {
        .name = "remove_task",
        .title = "Remove a finished task",
        .description =
            "Deletes a finished task's saved status and logs from its "
            "sandbox, freeing one of the 128 task slots. A running task is "
            "refused: cancel_task it first.",
        .input_schema = remove_input,
        .output_schema = remove_output,
        .annotations = "{\"title\":\"Remove a finished task\","
                       "\"readOnlyHint\":false,\"destructiveHint\":true,"
                       "\"idempotentHint\":false,\"openWorldHint\":false}",
        .fn = remove_task,
    },
};

int tb_task_tools_register(void)
{
	size_t i;

	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (tb_tools_register(&tools[i]) < 0)
			return -1;
	return 0;
}
