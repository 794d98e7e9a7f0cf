/* The Tasks extension of MCP 2026-07-28 (io.modelcontextprotocol/tasks):
 * a tools/call that declares it may be answered with a flat
 * CreateTaskResult; tasks/get inlines the result once the task is done;
 * tasks/cancel and tasks/update are acknowledged or refused. The same
 * backend serves the legacy utility (mcp_tasks.c), so a task is the same
 * task whichever era asks, from any server process. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "protocol/jsonrpc.h"
#include "protocol/mcp_tasks.h"
#include "tools/task_backend.h"

bool tb_mcp_tasks_ext_enabled(void)
{
	return tb_task_backend_get() != NULL;
}

/* The -32021 response naming the extension. */
static json_t *missing_extension(json_t *id, const char *what)
{
	return tb_rpc_error_data(
	    tb_rpc_error(id, TB_RPC_MISSING_CAPABILITY,
	                 "Missing required client capability: %s needs the "
	                 "extension " TB_EXT_TASKS
	                 " in _meta " TB_META_CAPABILITIES,
	                 what),
	    json_pack("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions",
	              TB_EXT_TASKS));
}

/* The extension's task fields from the backend's Task object (the legacy
 * shape: ttl and pollInterval are renamed). Steals task. */
static json_t *task_fields(json_t *task)
{
	json_t *ttl = json_object_get(task, "ttl");
	json_t *poll = json_object_get(task, "pollInterval");

	if (!task)
		return NULL;
	json_object_set(task, "ttlMs", ttl ? ttl : json_null());
	if (poll)
		json_object_set(task, "pollIntervalMs", poll);
	json_object_del(task, "ttl");
	json_object_del(task, "pollInterval");
	return task;
}

static bool terminal(const char *status)
{
	return status && (strcmp(status, "completed") == 0 ||
	                  strcmp(status, "failed") == 0 ||
	                  strcmp(status, "cancelled") == 0);
}

/* Whether a task (the extension's fields) has ended other than by a
 * cancel: it has an outcome to read. */
static bool ended_with_outcome(json_t *task)
{
	const char *status = json_string_value(json_object_get(task, "status"));

	return terminal(status) && strcmp(status, "cancelled") != 0;
}

/* The Task object of the job's taskId, in the extension's fields: NULL
 * with *reply set to the error response when there is none. */
static json_t *current(struct tb_call *c, json_t **reply)
{
	char err[1024] = "";
	json_t *task = NULL;
	int rc = tb_task_backend_get()->get(&c->base, tb_mcp_tasks_param_id(c),
	                                    &task, err, sizeof err);

	*reply = NULL;
	if (rc != 0 || !task) {
		*reply = tb_mcp_tasks_answer(c, rc, task, err);
		return NULL;
	}
	return task_fields(task);
}

/* Inlines a finished task's outcome into task: the tool's result (an
 * error of the command is a completed task whose result says isError),
 * or, when there is none to give, status failed and the error. */
static void inline_outcome(struct tb_call *c, json_t *task)
{
	char err[1024] = "";
	json_t *out = NULL;
	bool is_error = false;
	int rc = tb_task_backend_get()->result(
	    &c->base, json_string_value(json_object_get(task, "taskId")), &out,
	    &is_error, err, sizeof err);

	if (rc == 0 && out) {
		json_t *result = tb_call_tool_result(c, out, is_error);
		if (result) {
			json_object_set_new(result, "resultType",
			                    json_string("complete"));
			json_object_set_new(task, "status",
			                    json_string("completed"));
			json_object_set_new(task, "result", result);
			return;
		}
	}
	json_decref(out);
	if (rc == TB_TOOL_PARKED) /* cannot be: the task had ended */
		snprintf(err, sizeof err, "the task's end could not be read");
	json_object_set_new(task, "status", json_string("failed"));
	json_object_set_new(
	    task, "error",
	    json_pack("{s:i,s:s}", "code", rc < 0 ? rc : TB_RPC_INTERNAL_ERROR,
	              "message", err[0] ? err : "out of memory"));
}

/* tools/call answered with CreateTaskResult: the task exists (its status
 * record is written) before the answer leaves. A task that has already
 * ended (a quick command) has the status tasks/get would give it, without
 * the outcome itself. */
static json_t *job_create(struct tb_call *c)
{
	json_t *task, *err = tb_mcp_tasks_start(c, &task);

	if (err)
		return err;
	task = task_fields(task);
	if (!task)
		return NULL;
	if (ended_with_outcome(task)) {
		inline_outcome(c, task);
		json_object_del(task, "result");
		json_object_del(task, "error");
	}
	json_object_set_new(task, "resultType", json_string("task"));
	return tb_rpc_result(c->id, task);
}

/* tasks/get: the task; once completed or failed, its outcome inlined. */
static json_t *job_get(struct tb_call *c)
{
	json_t *reply, *task = current(c, &reply);

	if (!task)
		return reply;
	if (ended_with_outcome(task))
		inline_outcome(c, task);
	json_object_set_new(task, "resultType", json_string("complete"));
	return tb_rpc_result(c->id, task);
}

/* tasks/cancel: an empty ack, also for a task that had already ended. */
static json_t *job_cancel(struct tb_call *c)
{
	char err[1024] = "";
	json_t *reply, *out = NULL, *task = current(c, &reply);

	if (!task)
		return reply;
	bool ended =
	    terminal(json_string_value(json_object_get(task, "status")));
	json_decref(task);
	if (!ended) {
		int rc = tb_task_backend_get()->cancel(
		    &c->base, tb_mcp_tasks_param_id(c), &out, err, sizeof err);
		json_decref(out);
		/* It may have ended meanwhile: the backend refuses that
		 * with -32602, which is still an ended task here. */
		if (rc != 0 && rc != TB_RPC_INVALID_PARAMS)
			return tb_mcp_tasks_answer(c, rc, NULL, err);
	}
	return tb_rpc_result(c->id, json_object());
}

/* tasks/update: taskbox tasks never ask for input. */
static json_t *job_update(struct tb_call *c)
{
	json_t *reply, *task = current(c, &reply);

	if (!task)
		return reply;
	json_decref(task);
	return tb_rpc_error(c->id, TB_RPC_INVALID_PARAMS,
	                    "Invalid params: task %.512s is not waiting for "
	                    "input (taskbox tasks never ask for any; write to "
	                    "a task's stdin with its tools instead)",
	                    tb_mcp_tasks_param_id(c));
}

bool tb_mcp_tasks_ext_request(struct tb_mcp *s, json_t *id, const char *id_key,
                              const char *method, json_t *params)
{
	static const struct {
		const char *method;
		tb_call_job job;
	} methods[] = {
	    {"tasks/get", job_get},
	    {"tasks/cancel", job_cancel},
	    {"tasks/update", job_update},
	};
	json_t *token, *err;

	if (!tb_mcp_tasks_ext_enabled())
		return false;
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
		if (strcmp(method, methods[i].method) != 0)
			continue;
		err = tb_mcp_declares(params, TB_EXT_TASKS)
		          ? tb_mcp_tasks_bad_params(id, params, true, &token)
		          : missing_extension(id, method);
		if (err) {
			tb_mcp_send(s, err);
			return true;
		}
		json_t *copy = json_deep_copy(params);
		tb_mcp_tasks_submit(s, id, id_key, NULL, methods[i].job, copy,
		                    token);
		json_decref(copy);
		return true;
	}
	return false;
}

bool tb_mcp_tasks_ext_call(struct tb_mcp *s, json_t *id, const char *id_key,
                           const struct tb_tool_entry *tool, json_t *params,
                           json_t *args, json_t *token)
{
	const char *support =
	    json_string_value(json_object_get(tool->execution, "taskSupport"));

	if (!tb_mcp_tasks_ext_enabled() || !support ||
	    strcmp(support, "forbidden") == 0)
		return false;
	if (!tb_mcp_declares(params, TB_EXT_TASKS)) {
		if (strcmp(support, "required") != 0)
			return false;
		tb_mcp_send(s, missing_extension(id, tool->tool->name));
		return true;
	}
	tb_mcp_tasks_submit(s, id, id_key, tool, job_create, args, token);
	return true;
}
