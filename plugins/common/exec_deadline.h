/* The ladder a command goes down once past its timeout, shared by the
 * plugins whose exec polls: TERM to its process group at the deadline,
 * KILL a grace later, and giving up on it a while after the TERM.
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
	uint64_t kill_at, abandon_at; /* set when the TERM is sent */
	int timed_out;                /* the TERM was sent */
	int killed;                   /* the KILL after it was sent */
};

/* Takes the ladder's step due now, from an exec's poll tick: when
 * cancelled (NULL: never) says so, KILL and TASKBOX_E_CANCELLED; else TERM
 * at the deadline, KILL term_grace_ms after it, and TASKBOX_E_TIMEOUT from
 * abandon_ms after it on; TASKBOX_OK meanwhile. signal_group(ctx, "TERM" or
 * "KILL") sends a signal; clock_ms is read again after the TERM. */
__attribute__((visibility("hidden"))) int
tb_exec_deadline_tick(struct tb_exec_deadline *d, uint64_t (*clock_ms)(void),
                      int (*cancelled)(void *), void *cancelled_arg,
                      void (*signal_group)(void *ctx, const char *sig),
                      void *ctx);

#endif /* TB_PLUGIN_EXEC_DEADLINE_H */
