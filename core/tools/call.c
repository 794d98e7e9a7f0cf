/* A tools/call's services as its handler sees them: each one goes through
 * the ops the protocol layer put on the call. */
#include "config.h"

#include "tasks/task_wait.h"
#include "tools/tool.h"

bool tb_call_cancelled(const tb_call *call)
{
	return call->ops->cancelled(call);
}

int tb_call_cancelled_cb(void *call)
{
	return tb_call_cancelled(call);
}

void tb_call_progress(tb_call *call, double progress, double total,
                      const char *message)
{
	call->ops->progress(call, progress, total, message);
}

bool tb_call_sleep(tb_call *call, uint32_t timeout_ms)
{
	return call->ops->sleep(call, timeout_ms);
}

void tb_call_park(tb_call *call, uint32_t ms, tb_tool_step_fn step, void *state)
{
	call->ops->park(call, ms, -1, false, step, state);
}

void tb_call_park_fd(tb_call *call, uint32_t ms, int fd, tb_tool_step_fn step,
                     void *state)
{
	call->ops->park(call, ms, fd, false, step, state);
}

void tb_call_park_on(tb_call *call, uint32_t ms, int fd, tb_tool_step_fn step,
                     void *state)
{
	call->ops->park(call, ms, fd, true, step, state);
}

struct tb_session *tb_call_session(const tb_call *call)
{
	return call->session;
}

static bool waiter_sleep(void *call, uint32_t ms)
{
	return tb_call_sleep(call, ms);
}

static void waiter_progress(void *call, double progress, double total,
                            const char *message)
{
	tb_call_progress(call, progress, total, message);
}

void tb_call_waiter(tb_call *call, struct tb_waiter *w)
{
	w->arg = call;
	w->sleep = waiter_sleep;
	w->progress = waiter_progress;
}
