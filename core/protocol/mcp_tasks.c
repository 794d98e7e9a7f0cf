/* The tasks/... methods and task-augmented tools/call: parameter checks on
 * the reader thread, the work on a worker through the backend. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "protocol/jsonrpc.h"
#include "protocol/mcp_tasks.h"
#include "tools/task_backend.h"

#define RELATED_TASK "io.modelcontextprotocol/related-task"
#define IMMEDIATE "io.modelcontextprotocol/model-immediate-response"
#define TASK_ID_MAX 512

bool tb_mcp_tasks_enabled(const struct tb_mcp *s)
{
	return tb_task_backend_get() && s->era == TB_ERA_LEGACY &&
	       tb_mcp_at_least(s, "2025-11-25");
}

json_t *tb_mcp_tasks_capability(void)
{
	return json_pack("{s:{},s:{},s:{s:{s:{}}}}", "list", "cancel",
	                 "requests", "tools", "call");
}

json_t *tb_mcp_tasks_answer(struct tb_call *c, int rc, json_t *out,
                            const char *err)
{
	if (rc == 0 && out)
		return tb_rpc_result(c->id, out);
	json_decref(out);
	return tb_rpc_error(c->id, rc < 0 ? rc : TB_RPC_INTERNAL_ERROR, "%s",
	                    rc < 0 ? err : "Internal error: out of memory");
}

const char *tb_mcp_tasks_param_id(struct tb_call *c)
{
	return json_string_value(json_object_get(c->args, "taskId"));
}

static json_t *job_get(struct tb_call *c)
{
	char err[1024] = "";
	json_t *out = NULL;
	int rc = tb_task_backend_get()->get(&c->base, tb_mcp_tasks_param_id(c),
	                                    &out, err, sizeof err);

	return tb_mcp_tasks_answer(c, rc, out, err);
}

static json_t *job_cancel(struct tb_call *c)
{
	char err[1024] = "";
	json_t *out = NULL;
	int rc = tb_task_backend_get()->cancel(
	    &c->base, tb_mcp_tasks_param_id(c), &out, err, sizeof err);

	return tb_mcp_tasks_answer(c, rc, out, err);
}

static json_t *job_list(struct tb_call *c)
{
	char err[1024] = "";
	json_t *out = NULL;
	const char *cursor =
	    json_string_value(json_object_get(c->args, "cursor"));
	int rc = tb_task_backend_get()->list(&c->base, cursor, &out, err,
	                                     sizeof err);

	return tb_mcp_tasks_answer(c, rc, out, err);
}

/* The answer to tasks/result for the backend's rc and output: the tool
 * result the task's tools/call would have given, tied to the task by
 * _meta. */
static json_t *result_message(struct tb_call *c, int rc, json_t *out,
                              bool is_error, const char *err)
{
	const char *task_id = tb_mcp_tasks_param_id(c);

	if (rc != 0 || !out)
		return tb_mcp_tasks_answer(c, rc, out, err);
	json_t *result = tb_call_tool_result(c, out, is_error);
	if (result)
		json_object_set_new(
		    result, "_meta",
		    json_pack("{s:{s:s}}", RELATED_TASK, "taskId", task_id));
	return result ? tb_rpc_result(c->id, result) : NULL;
}

/* tasks/result answered after the backend's wait was parked. */
static json_t *job_result_end(struct tb_call *c, int step_rc, json_t *view)
{
	char err[1024] = "";
	json_t *out = NULL;
	bool is_error = false;
	int rc = tb_task_backend_get()->result_end(
	    &c->base, step_rc, view, &out, &is_error, err, sizeof err);

	return result_message(c, rc, out, is_error, err);
}

static json_t *job_result(struct tb_call *c)
{
	char err[1024] = "";
	json_t *out = NULL;
	bool is_error = false;
	int rc =
	    tb_task_backend_get()->result(&c->base, tb_mcp_tasks_param_id(c),
	                                  &out, &is_error, err, sizeof err);

	if (rc == TB_TOOL_PARKED) {
		c->job_end = job_result_end;
		return NULL; /* answered by job_result_end */
	}
	return result_message(c, rc, out, is_error, err);
}

json_t *tb_mcp_tasks_start(struct tb_call *c, json_t **task)
{
	char why[1024] = "";

	*task = NULL;
	if (tb_schema_validate(c->tool->validator, c->args, why, sizeof why))
		return tb_rpc_error(c->id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: %s", why);
	int rc = tb_task_backend_get()->create(&c->base, c->tool->tool, c->args,
	                                       task, why, sizeof why);
	if (rc != 0 || !*task) {
		json_t *err = tb_mcp_tasks_answer(c, rc, *task, why);
		*task = NULL;
		return err;
	}
	return NULL;
}

/* A task-augmented tools/call: the arguments are checked like any call's,
 * then the backend starts the task and the answer is CreateTaskResult. */
static json_t *job_create(struct tb_call *c)
{
	json_t *task, *err = tb_mcp_tasks_start(c, &task);

	if (err)
		return err;
	const char *tid = json_string_value(json_object_get(task, "taskId"));
	char note[700];
	snprintf(note, sizeof note,
	         "%s is running as MCP task %.500s; its result comes from "
	         "tasks/result, its state from tasks/get.",
	         c->tool->tool->name, tid ? tid : "");
	return tb_rpc_result(c->id, json_pack("{s:o,s:{s:s}}", "task", task,
	                                      "_meta", IMMEDIATE, note));
}

void tb_mcp_tasks_submit(struct tb_mcp *s, json_t *id, const char *id_key,
                         const struct tb_tool_entry *tool, tb_call_job job,
                         json_t *params, json_t *token)
{
	struct tb_call *c = tb_call_new(s, tool, id, id_key, params, token);

	if (!c) {
		tb_mcp_send(s, tb_rpc_error(id, TB_RPC_INTERNAL_ERROR,
		                            "Internal error: out of memory"));
		return;
	}
	c->job = job;
	tb_call_submit(c);
}

json_t *tb_mcp_tasks_bad_params(json_t *id, json_t *params, bool wants_id,
                                json_t **token)
{
	*token = NULL;
	if (params && !json_is_object(params))
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: params must be an object");
	json_t *bad_meta = tb_mcp_meta_error(id, params, token);
	if (bad_meta)
		return bad_meta;
	if (wants_id) {
		json_t *tid = json_object_get(params, "taskId");
		if (!json_is_string(tid) || json_string_length(tid) == 0 ||
		    json_string_length(tid) > TASK_ID_MAX)
			return tb_rpc_error(
			    id, TB_RPC_INVALID_PARAMS,
			    "Invalid params: field 'taskId' must "
			    "be a string of 1 to %d bytes, as a "
			    "task-augmented tools/call returned it",
			    TASK_ID_MAX);
	} else {
		json_t *cursor = json_object_get(params, "cursor");
		if (cursor && !json_is_null(cursor) && !json_is_string(cursor))
			return tb_rpc_error(
			    id, TB_RPC_INVALID_PARAMS,
			    "Invalid params: field 'cursor' must "
			    "be a string this server gave");
	}
	return NULL;
}

bool tb_mcp_tasks_request(struct tb_mcp *s, json_t *id, const char *id_key,
                          const char *method, json_t *params)
{
	static const struct {
		const char *method;
		tb_call_job job;
		bool wants_id;
	} methods[] = {
	    {"tasks/get", job_get, true},
	    {"tasks/result", job_result, true},
	    {"tasks/cancel", job_cancel, true},
	    {"tasks/list", job_list, false},
	};
	json_t *token, *err;

	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
		if (strcmp(method, methods[i].method) != 0)
			continue;
		if (!tb_mcp_tasks_enabled(s))
			return false; /* not offered: method not found */
		err = tb_mcp_tasks_bad_params(id, params, methods[i].wants_id,
		                              &token);
		if (err) {
			tb_mcp_send(s, err);
			return true;
		}
		json_t *copy = params ? json_deep_copy(params) : json_object();
		tb_mcp_tasks_submit(s, id, id_key, NULL, methods[i].job, copy,
		                    token);
		json_decref(copy);
		return true;
	}
	return false;
}

void tb_mcp_tasks_call(struct tb_mcp *s, json_t *id, const char *id_key,
                       const struct tb_tool_entry *tool, json_t *args,
                       json_t *token)
{
	const char *support =
	    json_string_value(json_object_get(tool->execution, "taskSupport"));

	if (!support || strcmp(support, "forbidden") == 0) {
		tb_mcp_send(s, tb_rpc_error(id, TB_RPC_METHOD_NOT_FOUND,
		                            "Method not found: tool %s does "
		                            "not support task execution; call "
		                            "it without 'task'",
		                            tool->tool->name));
		return;
	}
	tb_mcp_tasks_submit(s, id, id_key, tool, job_create, args, token);
}
