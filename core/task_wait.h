/* Waiting for a task without the client polling: get_task and cancel_task
 * with `wait`, and the MCP tasks utility's tasks/result. */
#ifndef TB_TASK_WAIT_H
#define TB_TASK_WAIT_H

#include <jansson.h>
#include <stdint.h>

#include "box.h"
#include "task_view.h"
#include "tool.h"

/* What ends a wait besides its time running out and the call being
 * cancelled. */
enum tb_wait_until {
	TB_WAIT_CHANGE,   /* the task is no longer running, or it has output
	                     past the page request's offsets */
	TB_WAIT_TERMINAL, /* the task is no longer running */
};

/* No time limit: the wait ends on its condition or on cancellation. */
#define TB_WAIT_FOREVER UINT32_MAX

/* Views the task like tb_task_view, again and again while the condition
 * does not hold, for up to wait_ms. Between two views it sleeps on the
 * call (notifications/cancelled wakes it at once) for ten times what the
 * last view cost, within TB_WAIT_MIN_MS..TB_WAIT_MAX_MS, so that a waiting
 * call keeps a provider busy at most a tenth of the time. With a
 * progressToken, reports the bytes of output seen so far as they grow.
 * Returns like tb_task_view: the last view, or a tool error. */
int tb_task_wait(tb_call *call, struct tb_box *box, const char *task_id,
                 const struct tb_page_req *pr, const char *note,
                 uint32_t wait_ms, enum tb_wait_until until, json_t **result);

#define TB_WAIT_MIN_MS 20
#define TB_WAIT_MAX_MS 500

/* The pause after a view that cost cost_us microseconds: ten times it,
 * clamped to TB_WAIT_MIN_MS..TB_WAIT_MAX_MS, and never past left_ms. */
uint32_t tb_wait_interval_ms(uint64_t cost_us, uint32_t left_ms);

#endif /* TB_TASK_WAIT_H */
