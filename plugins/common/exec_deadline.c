/* The exec deadline ladder (exec_deadline.h). */
#include "config.h"

#include "exec_deadline.h"
#include "taskbox/provider.h"

int tb_exec_deadline_tick(struct tb_exec_deadline *d,
                          uint64_t (*clock_ms)(void), int (*cancelled)(void *),
                          void *cancelled_arg,
                          int (*signal_group)(void *ctx, const char *sig),
                          void *ctx)
{
	uint64_t now = clock_ms();

	if (!d->cancel_at && cancelled && cancelled(cancelled_arg))
		d->cancel_at = now ? now : 1;
	if (d->cancel_at) {
		if (signal_group(ctx, "KILL") ||
		    now - d->cancel_at >= TB_EXEC_PID_WAIT_MS)
			return TASKBOX_E_CANCELLED;
		return TASKBOX_OK;
	}
	if (!d->timed_out && now >= d->deadline) {
		d->timed_out = 1;
		d->termed = signal_group(ctx, "TERM");
		d->kill_at = clock_ms() + d->term_grace_ms;
		d->abandon_at = clock_ms() + d->abandon_ms;
	} else if (d->timed_out && !d->killed && now >= d->kill_at) {
		d->killed = signal_group(ctx, "KILL");
	} else if (d->timed_out && !d->termed && !d->killed) {
		/* The pid came after the deadline. */
		d->termed = signal_group(ctx, "TERM");
	}
	if (d->timed_out && now >= d->abandon_at)
		return TASKBOX_E_TIMEOUT;
	return TASKBOX_OK;
}
