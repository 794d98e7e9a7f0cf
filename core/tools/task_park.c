/* tb_parked_task_wait (task_park.h): the wait's steps as the call's
 * continuation. */
#include "config.h"

#include <unistd.h>

#include "base/error_json.h"
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

static int go_on(tb_call *call, struct tb_wait *wait, json_t **result)
{
	struct tb_waiter w;
	uint32_t ms;

	tb_call_waiter(call, &w);
	if (!tb_call_cancelled(call)) {
		int fd = tb_wait_wake_fd(wait);
		if (tb_wait_pending(wait, &w, &ms)) {
			tb_call_park_fd(call, ms, fd, step, wait);
			return TB_TOOL_PARKED;
		}
		if (fd >= 0)
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
