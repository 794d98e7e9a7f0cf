/* run_command: a foreground shell command with bounded output. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tasks/box.h"
#include "tools/sandboxes.h"
#include "tasks/session.h"
#include "tasks/task_view.h"
#include "tools/tasks.h"
#include "tools/tool.h"
#include "tools/tool_args.h"
#include "host/sandbox_ref.h"

/* Bytes kept per stream; the rest is drained and reported as truncated. */
#define RUN_OUTPUT_LIMIT 65536

static const char run_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"command\"],\"properties\":{"
    "\"command\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":65536,"
    "\"description\":\"Shell command line, run with sh -c.\"},"
    "\"sandbox_id\":{\"type\":\"string\",\"minLength\":3,\"maxLength\":160,"
    "\"pattern\":\"" TB_SANDBOX_ID_PATTERN "\"},"
    "\"cwd\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096},"
    "\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3600,"
    "\"default\":60,\"description\":\"Seconds before the command is "
    "killed.\"}}}";

static const char run_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandbox_id\":{\"type\":\"string\"},"
    "\"exit_code\":{\"type\":[\"integer\",\"null\"]},"
    "\"timed_out\":{\"type\":\"boolean\"},"
    "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
    "\"stdout_truncated\":{\"type\":\"boolean\"},"
    "\"stderr_truncated\":{\"type\":\"boolean\"}},"
    "\"required\":[\"sandbox_id\",\"exit_code\",\"timed_out\",\"stdout\","
    "\"stderr\",\"stdout_truncated\",\"stderr_truncated\"]}";

static int run_command(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"command", "sandbox_id", "cwd",
	                                    "timeout", NULL};
	const char *command, *cwd;
	char err[TB_ERR_MAX], id[TB_SANDBOX_REF_MAX];
	struct taskbox_exec_result res;
	struct tb_box box;
	int64_t timeout;
	int rc;

	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_arg_str(args, "command", true, 1, 65536, &command, err,
	               sizeof(err)) < 0 ||
	    tb_arg_str(args, "cwd", false, 1, 4096, &cwd, err, sizeof(err)) <
	        0 ||
	    tb_arg_int(args, "timeout", 1, 3600, 60, &timeout, err,
	               sizeof(err)) < 0 ||
	    tb_sandbox_for_call(call, args, true, id, sizeof(id), err,
	                        sizeof(err)) < 0 ||
	    tb_call_open_box(call, id, "sandbox_id", &box, err, sizeof(err)) !=
	        TASKBOX_OK)
		goto refuse;
	tb_box_renew(&box, tb_session_lifetime(tb_call_session(call), box.id));
	{
		/* "--": a command that begins with - or + is still the
		 * command, not options of sh. */
		const char *argv[] = {"sh", "-c", "--", command, NULL};

		rc = tb_box_exec(&box, argv, cwd, (uint32_t)timeout * 1000,
		                 RUN_OUTPUT_LIMIT, tb_call_cancelled_cb, call,
		                 &res, err, sizeof(err));
	}
	tb_box_close(&box);
	if (rc != TASKBOX_OK) {
		tb_exec_result_free(&res);
		if (rc == TASKBOX_E_CANCELLED)
			snprintf(err, sizeof(err),
			         "run_command: cancelled by the client; the "
			         "command was stopped");
		goto refuse;
	}
	*result = json_pack(
	    "{s:s, s:o, s:b, s:o, s:o, s:b, s:b}", "sandbox_id", box.id,
	    "exit_code",
	    res.exit_code < 0 ? json_null() : json_integer(res.exit_code),
	    "timed_out", res.timed_out != 0, "stdout",
	    tb_page_text(res.out.data, res.out.len), "stderr",
	    tb_page_text(res.err.data, res.err.len), "stdout_truncated",
	    res.out_truncated != 0, "stderr_truncated", res.err_truncated != 0);
	tb_exec_result_free(&res);
	return tb_result_or_oom(result);
refuse:
	*result = tb_error_json(err);
	return 1;
}

static const struct tb_tool tool = {
    .name = "run_command",
    .title = "Run a command",
    .description =
        "Runs a shell command in a sandbox and waits for it (timeout "
        "seconds, default 60), returning exit_code, timed_out and the first "
        "65536 bytes of stdout and stderr (truncation is reported). For "
        "long work use start_task instead. Without sandbox_id it uses the "
        "session's default sandbox, creating one if there is none (that "
        "one is destroyed when the session ends unless a task is started "
        "in it). Renews the lifetime of a sandbox created in this "
        "session.",
    .input_schema = run_input,
    .output_schema = run_output,
    .annotations = "{\"title\":\"Run a command\",\"readOnlyHint\":false,"
                   "\"destructiveHint\":true,\"idempotentHint\":false,"
                   "\"openWorldHint\":false}",
    .execution = "{\"taskSupport\":\"optional\"}",
    .fn = run_command,
};

int tb_run_tool_register(void)
{
	return tb_tools_register(&tool);
}
