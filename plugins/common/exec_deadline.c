/* The exec deadline ladder (exec_deadline.h). */
#include "config.h"

#include "exec_deadline.h"
#include "taskbox/provider.h"

int tb_exec_deadline_tick(struct tb_exec_deadline *d,
                          uint64_t (*clock_ms)(void), int (*cancelled)(void *),
                          void *cancelled_arg,
                          void (*signal_group)(void *ctx, const char *sig),
                          void *ctx)
{
	uint64_t now = clock_ms();

	if (cancelled && cancelled(cancelled_arg)) {
		signal_group(ctx, "KILL");
		return TASKBOX_E_CANCELLED;
	}
	if (!d->timed_out && now >= d->deadline) {
		d->timed_out = 1;
		signal_group(ctx, "TERM");
		d->kill_at = clock_ms() + d->term_grace_ms;
		d->abandon_at = clock_ms() + d->abandon_ms;
	} else if (d->timed_out && !d->killed && now >= d->kill_at) {
		d->killed = 1;
		signal_group(ctx, "KILL");
	} else if (d->timed_out && now >= d->abandon_at) {
		return TASKBOX_E_TIMEOUT;
	}
	return TASKBOX_OK;
}
