/* The tasks module: reconnectable tasks, sandboxes and the ordinary tools
 * (run_command, read_file, write_file) over the configured providers. */
#ifndef TB_TASKS_H
#define TB_TASKS_H

#include "tools/tool.h"

struct tb_config;

/* Registers the module's tools and keeps the config's mask values. Call
 * once, after the provider registry is open and before serving. Returns 0,
 * or -1 after logging. */
int tb_tasks_init(const struct tb_config *cfg);

/* Frees what tb_tasks_init kept and the tasks layer's caches, once serving
 * has ended (every session ended). */
void tb_tasks_fini(void);

/* Registration of each tool group (called by tb_tasks_init). */
int tb_task_tools_register(void);
int tb_sandbox_tools_register(void);
int tb_run_tool_register(void);
int tb_file_tools_register(void);
int tb_list_tasks_tool_register(void);
int tb_list_sandboxes_tool_register(void);
int tb_task_backend_register(void);
int tb_task_input_tools_register(void);

/* start_task's handler, also used to start MCP tasks (tool.h's contract;
 * args must be a copy the caller owns). */
int tb_start_task(tb_call *call, json_t *args, json_t **result);

#endif /* TB_TASKS_H */
