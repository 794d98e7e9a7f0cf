/* list_tasks: a sandbox's tasks, newest first, paged. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/principal.h"
#include "tools/sandboxes.h"
#include "tasks/task_list.h"
#include "tools/task_schemas.h"
#include "tools/tasks.h"
#include "tools/tool.h"
#include "tools/tool_args.h"

#define PAGE 50

static const char list_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"sandbox_id\":" SANDBOX_ID_SCHEMA ","
    "\"state\":" STATE_SCHEMA ","
    "\"cursor\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,"
    "\"description\":\"next_cursor of the previous page.\"}}}";

#define NULLABLE_INT "{\"type\":[\"integer\",\"null\"]}"
static const char list_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandbox_id\":{\"type\":\"string\"},"
    "\"tasks\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"properties\":{\"sandbox_id\":{\"type\":\"string\"},"
    "\"task_id\":{\"type\":\"string\"},"
    "\"command\":{\"type\":[\"string\",\"null\"]},"
    "\"state\":" STATE_SCHEMA ",\"exit_code\":" NULLABLE_INT ","
    "\"started_at\":" NULLABLE_INT ",\"finished_at\":" NULLABLE_INT ","
    "\"stdout_size\":{\"type\":\"integer\"},"
    "\"stderr_size\":{\"type\":\"integer\"},"
    "\"error\":{\"type\":[\"string\",\"null\"]}," TASK_INPUT_PROPS "},"
    "\"required\":[\"sandbox_id\",\"task_id\",\"command\",\"state\","
    "\"exit_code\",\"started_at\",\"finished_at\",\"stdout_size\","
    "\"stderr_size\",\"error\"," TASK_INPUT_NAMES "]}},"
    "\"next_cursor\":{\"type\":[\"string\",\"null\"]}},"
    "\"required\":[\"sandbox_id\",\"tasks\",\"next_cursor\"]}";

static int list_tasks(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"sandbox_id", "state", "cursor",
	                                    NULL};
	static const char *const states[] = {
	    "running",   "succeeded", "failed", "cancelled",
	    "timed_out", "unknown",   NULL};
	const char *state, *cursor;
	char err[TB_ERR_MAX], id[TB_SANDBOX_REF_MAX], next[TB_LIST_CURSOR_MAX];
	struct tb_box box;
	json_t *all, *page;

	(void)call;
	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_arg_enum(args, "state", states, NULL, &state, err, sizeof(err)) <
	        0 ||
	    tb_arg_str(args, "cursor", false, 1, 64, &cursor, err,
	               sizeof(err)) < 0 ||
	    tb_sandbox_for_call(call, args, false, id, sizeof(id), err,
	                        sizeof(err)) < 0 ||
	    tb_call_open_box(call, id, "sandbox_id", &box, err, sizeof(err)) !=
	        TASKBOX_OK)
		goto refuse;
	if (tb_task_list(&box, &all, err, sizeof(err)) < 0) {
		tb_box_close(&box);
		goto refuse;
	}
	tb_box_close(&box);
	if (tb_task_list_page(all, state, cursor, PAGE, &page, next) < 0) {
		json_decref(all);
		snprintf(err, sizeof(err),
		         "cursor: not a next_cursor that list_tasks returned");
		goto refuse;
	}
	json_decref(all);
	*result =
	    json_pack("{s:s,s:o,s:o}", "sandbox_id", box.id, "tasks", page,
	              "next_cursor", next[0] ? json_string(next) : json_null());
	return tb_result_or_oom(result);
refuse:
	*result = tb_error_json(err);
	return 1;
}

static const struct tb_tool tool = {
    .name = "list_tasks",
    .title = "List a sandbox's tasks",
    .description =
        "Lists the tasks of a sandbox (default: the session's default "
        "sandbox), newest first, 50 per page: each with its handle "
        "(sandbox_id + task_id), command (masked), state, exit_code, Unix "
        "start/finish times, the sizes of its saved stdout and stderr, "
        "error, stdin mode, idempotency_key, signal and ended_by. state "
        "filters by state. Pass next_cursor back as cursor "
        "for the next page; it is null on the last. Use it to find tasks "
        "after losing their handles; get_task reads one.",
    .input_schema = list_input,
    .output_schema = list_output,
    .annotations = "{\"title\":\"List a sandbox's tasks\","
                   "\"readOnlyHint\":true,\"openWorldHint\":false}",
    .scope = TB_SCOPE_READ,
    .fn = list_tasks,
};

int tb_list_tasks_tool_register(void)
{
	return tb_tools_register(&tool);
}
