/* The MCP tasks utility (2025-11-25) on the protocol side: the tasks
 * capability, the tasks/... methods and task-augmented tools/call, served
 * by the backend of task_backend.h; and the Tasks extension of 2026-07-28
 * (mcp_tasks_ext.c) on the same backend. Private to the MCP core. */
#ifndef TB_MCP_TASKS_H
#define TB_MCP_TASKS_H

#include <jansson.h>
#include <stdbool.h>

#include "protocol/mcp_session.h"

/* True when this session serves the legacy utility: a backend is set and
 * the negotiated version (legacy era) has it. */
bool tb_mcp_tasks_enabled(const struct tb_mcp *s);

/* True when the Tasks extension is offered (a backend is set). */
bool tb_mcp_tasks_ext_enabled(void);

/* Answers (or hands off) method when it is one of the extension's
 * tasks/get, tasks/update, tasks/cancel; returns false when it is not (or
 * no backend is set). A modern request. */
bool tb_mcp_tasks_ext_request(struct tb_mcp *s, json_t *id, const char *id_key,
                              const char *method, json_t *params);

/* A modern tools/call of tool: when the tool supports task execution and
 * the request declares the extension, starts it as a task and returns
 * true (answered or handed off); a tool that requires it, undeclared, is
 * answered -32021. False: an ordinary call. Takes nothing. */
bool tb_mcp_tasks_ext_call(struct tb_mcp *s, json_t *id, const char *id_key,
                           const struct tb_tool_entry *tool, json_t *params,
                           json_t *args, json_t *token);

/* --- shared by both (mcp_tasks.c) --- */

/* The response for a backend's answer: result (out, stolen), or the
 * error code rc with err. */
json_t *tb_mcp_tasks_answer(struct tb_call *c, int rc, json_t *out,
                            const char *err);

/* The taskId of a job's params. */
const char *tb_mcp_tasks_param_id(struct tb_call *c);

/* Checks a tasks/... method's params (taskId when wants_id, else the
 * cursor) and _meta; returns an error response or NULL. */
json_t *tb_mcp_tasks_bad_params(json_t *id, json_t *params, bool wants_id,
                                json_t **token);

/* Checks c's arguments and starts its tool as a task: NULL with the
 * backend's Task object in *task, or the error response. */
json_t *tb_mcp_tasks_start(struct tb_call *c, json_t **task);

/* Makes a call for a job and submits it. params is borrowed. */
void tb_mcp_tasks_submit(struct tb_mcp *s, json_t *id, const char *id_key,
                         const struct tb_tool_entry *tool, tb_call_job job,
                         json_t *params, json_t *token);

/* The capabilities.tasks object to declare. */
json_t *tb_mcp_tasks_capability(void);

/* Answers (or hands off) method when it is one of tasks/...; returns false
 * when it is not. */
bool tb_mcp_tasks_request(struct tb_mcp *s, json_t *id, const char *id_key,
                          const char *method, json_t *params);

/* A tools/call whose params carry `task`: checks that the tool accepts
 * task execution and hands the start to the pool. Takes args (a copy the
 * call owns). */
void tb_mcp_tasks_call(struct tb_mcp *s, json_t *id, const char *id_key,
                       const struct tb_tool_entry *tool, json_t *args,
                       json_t *token);

#endif /* TB_MCP_TASKS_H */
