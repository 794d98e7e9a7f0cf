/* A task wait that holds no thread: get_task and cancel_task with `wait`
 * park their call between the wait's steps (tasks/task_wait.h). */
#ifndef TB_TASK_PARK_H
#define TB_TASK_PARK_H

#include <jansson.h>

#include "tasks/task_wait.h"
#include "tools/tool.h"

/* Waits like tb_task_wait, through the call: takes box over, returns like
 * a handler (0 with the view, 1 with a tool error), or TB_TOOL_PARKED once
 * the call is parked; the answer then comes from a later step. */
int tb_parked_task_wait(tb_call *call, struct tb_box *box, const char *task_id,
                        const struct tb_page_req *pr, const char *note,
                        uint32_t wait_ms, enum tb_wait_until until,
                        json_t **result);

#endif /* TB_TASK_PARK_H */
