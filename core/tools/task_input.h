/* Interactive tasks: start_task's stdin, tty and idempotency_key options,
 * and the write_task and resize_task tools. */
#ifndef TB_TASK_INPUT_H
#define TB_TASK_INPUT_H

#include <jansson.h>
#include <stddef.h>

#include "tasks/sup_client.h"

/* Reads start_task's stdin, tty, rows, cols and idempotency_key into req
 * (its stdin_mode, rows, cols and key, borrowed from args). Returns 0, or
 * -1 with a message naming the field and the rule in err. */
int tb_start_input_args(json_t *args, struct tb_sup_start_req *req, char *err,
                        size_t errlen);

/* Checks the sandbox_id and task_id arguments every task tool takes. */
int tb_task_handle_args(json_t *args, const char **sandbox_id,
                        const char **task_id, char *err, size_t errlen);

#endif /* TB_TASK_INPUT_H */
