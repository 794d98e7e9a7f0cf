/* The MCP tasks utility (2025-11-25) as the protocol layer asks the tools
 * layer to serve it: task-augmented tools/call, tasks/get, tasks/result,
 * tasks/list and tasks/cancel. The core does the protocol (capabilities,
 * parameters, response shapes); the backend maps MCP tasks onto its own. Every
 * function runs on a worker thread for one request and may block; each
 * returns 0 with *out set (a new object the core takes), or a JSON-RPC
 * error code (< 0, base/rpc_codes.h) with the message in err. */
#ifndef TB_TASK_BACKEND_H
#define TB_TASK_BACKEND_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tools/tool.h"

struct tb_task_backend {
	/* Starts tool (its arguments already valid against its schema) as a
	 * task; *out is the Task object. */
	int (*create)(tb_call *call, const struct tb_tool *tool, json_t *args,
	              json_t **out, char *err, size_t errlen);
	/* The Task object of task_id. */
	int (*get)(tb_call *call, const char *task_id, json_t **out, char *err,
	           size_t errlen);
	/* Waits until task_id is terminal (or the call is cancelled); *out
	 * is the tool's output object, *is_error its isError. Or parks the
	 * call (tb_call_park) and returns TB_TOOL_PARKED: the wait's last
	 * step then returns like a tool handler, and its rc and output go
	 * to result_end. */
	int (*result)(tb_call *call, const char *task_id, json_t **out,
	              bool *is_error, char *err, size_t errlen);
	/* The end of a parked result: rc and view are its last step's
	 * (view is stolen); sets *out and *is_error like result. */
	int (*result_end)(tb_call *call, int rc, json_t *view, json_t **out,
	                  bool *is_error, char *err, size_t errlen);
	/* One page of Task objects: *out = {"tasks": [...], "nextCursor"?}.
	 * cursor is NULL for the first page. */
	int (*list)(tb_call *call, const char *cursor, json_t **out, char *err,
	            size_t errlen);
	/* Cancels task_id; *out is its Task object afterwards. A task that
	 * is already terminal is refused with -32602. */
	int (*cancel)(tb_call *call, const char *task_id, json_t **out,
	              char *err, size_t errlen);
};

/* Sets the backend (borrowed for the life of the process). Call before
 * serving starts. Without one the server declares no tasks capability. */
void tb_task_backend_set(const struct tb_task_backend *backend);

/* The backend set, or NULL. */
const struct tb_task_backend *tb_task_backend_get(void);

#endif /* TB_TASK_BACKEND_H */
