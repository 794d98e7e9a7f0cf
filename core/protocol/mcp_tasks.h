/* The MCP tasks utility on the protocol side: the tasks capability, the
 * tasks/... methods and task-augmented tools/call, served by the backend of
 * task_backend.h. Private to the MCP core. */
#ifndef TB_MCP_TASKS_H
#define TB_MCP_TASKS_H

#include <jansson.h>
#include <stdbool.h>

#include "protocol/mcp_session.h"

/* True when this session serves tasks: a backend is set and the
 * negotiated version has the utility. */
bool tb_mcp_tasks_enabled(const struct tb_mcp *s);

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
