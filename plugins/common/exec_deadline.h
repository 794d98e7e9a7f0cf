/* The ladder a command goes down once past its timeout, shared by the
 * plugins whose exec polls: TERM to its process group at the deadline,
 * KILL a grace later, and giving up on it a while after the TERM. A signal
 * needs the command's pid, which its stream brings: one due before the pid
 * came is sent once it comes (a cancel waits for it up to
 * TB_EXEC_PID_WAIT_MS), so that a command the backend started meanwhile is
 * not left running.
 * Compiled into each plugin (a plugin links no core code), so every name
 * here is hidden. */
#ifndef TB_PLUGIN_EXEC_DEADLINE_H
#define TB_PLUGIN_EXEC_DEADLINE_H

#include <stdint.h>

/* One command's place on the ladder; times in ms on the caller's clock.
 * The caller sets the first three fields and zeroes the rest. */
struct tb_exec_deadline {
	uint64_t deadline;            /* the command's timeout */
	uint64_t term_grace_ms;       /* from the TERM to the KILL */
	uint64_t abandon_ms;          /* from the TERM to giving up */
	uint64_t kill_at, abandon_at; /* set at the deadline */
	uint64_t cancel_at;           /* when cancelled first said so */
	int timed_out;                /* past the deadline */
	int termed;                   /* the TERM was sent */
	int killed;                   /* the KILL after it was sent */
};

/* How long a cancel waits for the pid its KILL needs. */
#define TB_EXEC_PID_WAIT_MS 5000u

/* Takes the ladder's step due now, from an exec's poll tick: once
 * cancelled (NULL: never) says so, KILL and TASKBOX_E_CANCELLED (when no
 * pid came within TB_EXEC_PID_WAIT_MS, TASKBOX_E_CANCELLED unsent); else
 * TERM at the deadline, KILL term_grace_ms after it, and
 * TASKBOX_E_TIMEOUT from abandon_ms after it on; TASKBOX_OK meanwhile.
 * signal_group(ctx, "TERM" or "KILL") sends a signal and returns 1, or 0
 * when the pid has not come yet (asked again at the next tick); clock_ms is
 * read again after the TERM. */
__attribute__((visibility("hidden"))) int
tb_exec_deadline_tick(struct tb_exec_deadline *d, uint64_t (*clock_ms)(void),
                      int (*cancelled)(void *), void *cancelled_arg,
                      int (*signal_group)(void *ctx, const char *sig),
                      void *ctx);

#endif /* TB_PLUGIN_EXEC_DEADLINE_H */
