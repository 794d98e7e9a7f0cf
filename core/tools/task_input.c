/* start_task's input options, write_task and resize_task. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "tasks/task_id.h"
#include "tasks/write_gate.h"
#include "tools/task_input.h"
#include "tools/task_schemas.h"
#include "tools/tasks.h"
#include "tools/tool.h"
#include "tools/tool_args.h"

/* The most bytes one write_task sends. */
#define WRITE_MAX 65536
/* Its base64 text: 4 characters per 3 bytes. */
#define WRITE_B64_MAX ((WRITE_MAX + 2) / 3 * 4)
#define TERM_MAX 1000

static const char write_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"sandbox_id\",\"task_id\",\"data\"],\"properties\":{"
    "\"sandbox_id\":" SANDBOX_ID_SCHEMA ",\"task_id\":" TASK_ID_SCHEMA ","
    "\"data\":{\"type\":\"string\",\"maxLength\":87384,\"description\":"
    "\"Bytes for the task's stdin (at most 65536 once decoded); may be "
    "empty with eof.\"},"
    "\"encoding\":{\"type\":\"string\",\"enum\":[\"utf8\",\"base64\"],"
    "\"default\":\"utf8\",\"description\":\"How data is written: utf8 "
    "text, or base64 of any bytes.\"},"
    "\"eof\":{\"type\":\"boolean\",\"default\":false,\"description\":"
    "\"Close the task's stdin after data (on a terminal: send its "
    "end-of-file character, ^D).\"}}}";

static const char write_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandbox_id\":{\"type\":\"string\"},\"task_id\":{\"type\":\"string\"},"
    "\"written\":{\"type\":\"integer\"},\"eof\":{\"type\":\"boolean\"}},"
    "\"required\":[\"sandbox_id\",\"task_id\",\"written\",\"eof\"]}";

static const char resize_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"sandbox_id\",\"task_id\",\"rows\",\"cols\"],"
    "\"properties\":{"
    "\"sandbox_id\":" SANDBOX_ID_SCHEMA ",\"task_id\":" TASK_ID_SCHEMA ","
    "\"rows\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000},"
    "\"cols\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000}}}";

static const char resize_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandbox_id\":{\"type\":\"string\"},\"task_id\":{\"type\":\"string\"},"
    "\"rows\":{\"type\":\"integer\"},\"cols\":{\"type\":\"integer\"}},"
    "\"required\":[\"sandbox_id\",\"task_id\",\"rows\",\"cols\"]}";

int tb_start_input_args(json_t *args, struct tb_sup_start_req *req, char *err,
                        size_t errlen)
{
	static const char *const modes[] = {"null", "pipe", NULL};
	bool tty, sized = json_object_get(args, "rows") ||
	                  json_object_get(args, "cols");
	const char *mode, *key;
	int64_t rows, cols;

	if (tb_arg_enum(args, "stdin", modes, NULL, &mode, err, errlen) < 0 ||
	    tb_arg_bool(args, "tty", false, &tty, err, errlen) < 0 ||
	    tb_arg_int(args, "rows", 1, TERM_MAX, 24, &rows, err, errlen) < 0 ||
	    tb_arg_int(args, "cols", 1, TERM_MAX, 80, &cols, err, errlen) < 0 ||
	    tb_arg_str(args, "idempotency_key", false, 1, TB_TASK_KEY_MAX, &key,
	               err, errlen) < 0)
		return -1;
	if (key && !tb_task_key_valid(key)) {
		snprintf(err, errlen,
		         "idempotency_key: must be 1 to %d characters of A-Z, "
		         "a-z, 0-9, '_', '.' and '-'",
		         TB_TASK_KEY_MAX);
		return -1;
	}
	if (tty && mode && strcmp(mode, "null") == 0) {
		snprintf(err, errlen,
		         "stdin: \"null\" cannot go with tty: true (the "
		         "terminal is the task's stdin); leave stdin out");
		return -1;
	}
	if (!tty && sized) {
		snprintf(err, errlen, "%s: only with tty: true",
		         json_object_get(args, "rows") ? "rows" : "cols");
		return -1;
	}
	req->stdin_mode = tty ? "tty" : mode ? mode : "null";
	req->rows = tty ? (unsigned)rows : 0;
	req->cols = tty ? (unsigned)cols : 0;
	req->key = key;
	return 0;
}

/* A refused or unsure write or resize as a tool error. */
static json_t *verb_error(const char *verb, const struct tb_box *box,
                          const char *task_id, const struct tb_sup_reply *reply)
{
	if (reply->outcome == TB_SUP_REFUSED &&
	    strcmp(reply->code, "not_found") == 0)
		return tb_error_jsonf("task_id: no task %s in sandbox %s",
		                      task_id, box->id);
	if (reply->outcome == TB_SUP_REFUSED &&
	    strcmp(reply->code, "closed") == 0)
		return tb_error_jsonf("task_id: %s", reply->message);
	if (reply->outcome == TB_SUP_REFUSED)
		return tb_error_jsonf("sandbox %s: %s refused: %s", box->id,
		                      verb, reply->message);
	return tb_error_jsonf("sandbox %s: %s to task %s is not confirmed: "
	                      "%s",
	                      box->id, verb, task_id, reply->message);
}

/* data as bytes: a new buffer in *out. Returns 0, or -1 with err set. */
static int write_data(json_t *args, unsigned char **out, size_t *len, char *err,
                      size_t errlen)
{
	static const char *const encodings[] = {"utf8", "base64", NULL};
	json_t *data = json_object_get(args, "data");
	const char *enc, *text;
	size_t n;

	if (tb_arg_enum(args, "encoding", encodings, "utf8", &enc, err,
	                errlen) < 0)
		return -1;
	if (!json_is_string(data)) {
		snprintf(err, errlen, "data: required, a string");
		return -1;
	}
	text = json_string_value(data);
	n = json_string_length(data);
	if (strcmp(enc, "base64") == 0) {
		if (n > WRITE_B64_MAX ||
		    tb_base64_decode(text, n, out, len) < 0) {
			snprintf(err, errlen,
			         "data: not base64 (RFC 4648, standard "
			         "alphabet, padded, no whitespace) of at most "
			         "%d bytes",
			         WRITE_MAX);
			return -1;
		}
	} else {
		*out = malloc(n ? n : 1);
		if (*out == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memcpy(*out, text, n);
		*len = n;
	}
	if (*len > WRITE_MAX) {
		snprintf(err, errlen,
		         "data: %zu bytes; at most %d per call (send the "
		         "rest with further calls)",
		         *len, WRITE_MAX);
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static int write_task(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"sandbox_id", "task_id", "data",
	                                    "encoding",   "eof",     NULL};
	const char *sandbox_id, *task_id;
	unsigned char *data = NULL;
	char err[TB_ERR_MAX];
	struct tb_sup_reply reply;
	struct tb_box box;
	size_t len = 0, written;
	bool eof, eof_done;
	int rc, ticket = -1;

	(void)call;
	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_task_handle_args(args, &sandbox_id, &task_id, err, sizeof(err)) <
	        0 ||
	    tb_arg_bool(args, "eof", false, &eof, err, sizeof(err)) < 0 ||
	    write_data(args, &data, &len, err, sizeof(err)) < 0 ||
	    (ticket = tb_write_gate_enter(sandbox_id, task_id, err,
	                                  sizeof(err))) < 0 ||
	    tb_call_open_box(call, sandbox_id, "sandbox_id", &box, err,
	                     sizeof(err)) != TASKBOX_OK) {
		tb_write_gate_leave(ticket);
		free(data);
		*result = tb_error_json(err);
		return 1;
	}
	rc = tb_sup_write(&box, task_id, data, len, eof, &written, &eof_done,
	                  &reply);
	tb_write_gate_leave(ticket);
	free(data);
	tb_box_close(&box);
	if (rc < 0) {
		*result = verb_error("write", &box, task_id, &reply);
		tb_sup_reply_clear(&reply);
		return 1;
	}
	tb_sup_reply_clear(&reply);
	*result =
	    json_pack("{s:s, s:s, s:I, s:b}", "sandbox_id", box.id, "task_id",
	              task_id, "written", (json_int_t)written, "eof", eof_done);
	return tb_result_or_oom(result);
}

static int resize_task(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"sandbox_id", "task_id", "rows",
	                                    "cols", NULL};
	const char *sandbox_id, *task_id;
	char err[TB_ERR_MAX];
	struct tb_sup_reply reply;
	struct tb_box box;
	int64_t rows, cols;
	int rc;

	(void)call;
	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_task_handle_args(args, &sandbox_id, &task_id, err, sizeof(err)) <
	        0 ||
	    tb_arg_int(args, "rows", 1, TERM_MAX, 0, &rows, err, sizeof(err)) <
	        0 ||
	    tb_arg_int(args, "cols", 1, TERM_MAX, 0, &cols, err, sizeof(err)) <
	        0)
		goto refuse;
	if (rows == 0 || cols == 0) {
		snprintf(err, sizeof(err), "%s: required, 1 to %d",
		         rows == 0 ? "rows" : "cols", TERM_MAX);
		goto refuse;
	}
	if (tb_call_open_box(call, sandbox_id, "sandbox_id", &box, err,
	                     sizeof(err)) != TASKBOX_OK)
		goto refuse;
	rc = tb_sup_resize(&box, task_id, (unsigned)rows, (unsigned)cols,
	                   &reply);
	tb_box_close(&box);
	if (rc < 0) {
		*result = verb_error("resize", &box, task_id, &reply);
		tb_sup_reply_clear(&reply);
		return 1;
	}
	tb_sup_reply_clear(&reply);
	*result = json_pack("{s:s, s:s, s:I, s:I}", "sandbox_id", box.id,
	                    "task_id", task_id, "rows", (json_int_t)rows,
	                    "cols", (json_int_t)cols);
	return tb_result_or_oom(result);
refuse:
	*result = tb_error_json(err);
	return 1;
}

static const struct tb_tool tools[] = {
    {
        .name = "write_task",
        .title = "Write to a task's stdin",
        .description =
            "Sends bytes to the stdin of a task started with stdin \"pipe\" "
            "or tty: true, from any session or server process, and "
            "optionally closes it (eof: true; on a terminal that sends "
            "^D). Returns written: how many bytes the task's pipe took. "
            "Fewer than sent means the task is not reading and its pipe "
            "is full (the call waits about 2 seconds for room first): "
            "send the rest later. One write per task at a time: a write "
            "while another to the same task is in progress (or while the "
            "server already runs as many as it allows) is an error that "
            "says so, with nothing written: retry later. On a terminal "
            "the task's echo shows in its stdout. Writing to a task that "
            "ended, that was started without stdin, or after eof is an "
            "error.",
        .input_schema = write_input,
        .output_schema = write_output,
        .annotations = "{\"title\":\"Write to a task's stdin\","
                       "\"readOnlyHint\":false,\"destructiveHint\":false,"
                       "\"idempotentHint\":false,\"openWorldHint\":false}",
        .fn = write_task,
    },
    {
        .name = "resize_task",
        .title = "Resize a task's terminal",
        .description =
            "Sets the window size (rows, cols) of a task started with "
            "tty: true; the task gets SIGWINCH.",
        .input_schema = resize_input,
        .output_schema = resize_output,
        .annotations = "{\"title\":\"Resize a task's terminal\","
                       "\"readOnlyHint\":false,\"destructiveHint\":false,"
                       "\"idempotentHint\":true,\"openWorldHint\":false}",
        .fn = resize_task,
    },
};

int tb_task_input_tools_register(void)
{
	size_t i;

	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (tb_tools_register(&tools[i]) < 0)
			return -1;
	return 0;
}
