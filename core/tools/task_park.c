/* tb_parked_task_wait (task_park.h): the wait's steps as the call's
 * continuation. */
#include "config.h"

#include <unistd.h>

#include "base/error_json.h"
#include "base/fd_budget.h"
#include "tools/task_park.h"

/* Parks the call for the wait's next step, or ends the wait. */
static int go_on(tb_call *call, struct tb_wait *wait, json_t **result);

static int step(tb_call *call, void *state, json_t **result)
{
	struct tb_wait *wait = state;

	if (tb_call_cancelled(call))
		return tb_wait_end(wait, result) == 0 ? 0 : 1;
	tb_wait_step(wait);
	return go_on(call, wait, result);
}

/* Ends a wait the descriptor budget has no room for: the call is
 * refused (HTTP: 503), its view dropped. */
static int refuse(struct tb_wait *wait, json_t **result)
{
	char why[256];
	json_t *view = NULL;

	tb_wait_end(wait, &view);
	json_decref(view);
	*result = tb_error_json(tb_fd_budget_refusal(why, sizeof why));
	return TB_TOOL_BUSY;
}

static int go_on(tb_call *call, struct tb_wait *wait, json_t **result)
{
	struct tb_waiter w;
	uint32_t ms;
	bool borrowed;

	tb_call_waiter(call, &w);
	if (!tb_call_cancelled(call)) {
		int fd = tb_wait_wake_fd(wait, &borrowed);
		if (tb_wait_refused(wait))
			return refuse(wait, result);
		if (tb_wait_pending(wait, &w, &ms)) {
			if (borrowed)
				tb_call_park_on(call, ms, fd, step, wait);
			else
				tb_call_park_fd(call, ms, fd, step, wait);
			return TB_TOOL_PARKED;
		}
		if (fd >= 0 && !borrowed)
			close(fd);
	}
	return tb_wait_end(wait, result) == 0 ? 0 : 1;
}

int tb_parked_task_wait(tb_call *call, struct tb_box *box, const char *task_id,
                        const struct tb_page_req *pr, const char *note,
                        uint32_t wait_ms, enum tb_wait_until until,
                        json_t **result)
{
	struct tb_wait *wait =
	    tb_wait_begin(box, task_id, pr, note, wait_ms, until);

	if (!wait) {
		tb_box_close(box);
		*result = tb_error_json("out of memory starting a wait");
		return 1;
	}
	return go_on(call, wait, result);
}
