/* Waiting for a task without the client polling: get_task and cancel_task
 * with `wait`, and the MCP tasks utility's tasks/result. */
#ifndef TB_TASK_WAIT_H
#define TB_TASK_WAIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "tasks/box.h"
#include "tasks/task_view.h"

/* What ends a wait besides its time running out and the call being
 * cancelled. */
enum tb_wait_until {
	TB_WAIT_CHANGE,   /* the task is no longer running, or it has output
	                     past the page request's offsets */
	TB_WAIT_TERMINAL, /* the task is no longer running */
};

/* What a wait needs from whoever waits (a tools/call), supplied by it. */
struct tb_waiter {
	void *arg;
	/* Sleeps up to ms, or less when the waiter is cancelled; returns
	 * true when it is (the wait then ends at once). Only tb_task_wait
	 * uses it; a stepped wait (below) needs no sleep. */
	bool (*sleep)(void *arg, uint32_t ms);
	/* Reports progress (bytes of output seen so far). */
	void (*progress)(void *arg, double progress, double total,
	                 const char *message);
};

/* No time limit: the wait ends on its condition or on cancellation. */
#define TB_WAIT_FOREVER UINT32_MAX

/* Views the task like tb_task_view, again and again while the condition
 * does not hold, for up to wait_ms. Between two views it sleeps through w
 * (a cancel wakes it at once) for ten times what the
 * last view cost, within TB_WAIT_MIN_MS..TB_WAIT_MAX_MS, so that a waiting
 * call keeps a provider busy at most a tenth of the time. With a
 * progressToken, reports the bytes of output seen so far as they grow.
 * box stays the caller's. Returns like tb_task_view: the last view, or a
 * tool error; -1 with *result NULL when out of memory. */
int tb_task_wait(const struct tb_waiter *w, struct tb_box *box,
                 const char *task_id, const struct tb_page_req *pr,
                 const char *note, uint32_t wait_ms, enum tb_wait_until until,
                 json_t **result);

/* The same wait in steps, for a caller that holds no thread between them
 * (a parked call):
 *   w = tb_wait_begin(...);             the first view
 *   while (tb_wait_pending(w, wr, &ms)) after ms (or on cancellation,
 *           tb_wait_step(w);            then skip to the end)
 *   rc = tb_wait_end(w, &result);
 * tb_wait_begin takes box over (tb_wait_end closes it) and copies what
 * it is given; it returns NULL when out of memory (box is still the
 * caller's then). */
struct tb_wait;
struct tb_wait *tb_wait_begin(struct tb_box *box, const char *task_id,
                              const struct tb_page_req *pr, const char *note,
                              uint32_t wait_ms, enum tb_wait_until until);

/* True when the wait goes on: *ms is the pause before the next step,
 * after which progress was reported through w (when it has a token). */
bool tb_wait_pending(struct tb_wait *wait, const struct tb_waiter *w,
                     uint32_t *ms);

/* A descriptor that polls readable when the wait should look at its task
 * before its pause is over, for waking it; the caller closes it. On the
 * local provider (shared pids): when the task's supervisor exits or,
 * sooner, renames a new status record into place (up to a few waits at
 * once watch the task's directory); the pause may then be longer (the end
 * wakes the wait; new output is looked for at a tenth of the silence so
 * far, at most 100 ms apart). Elsewhere: when the supervisor's wait verb,
 * run in the sandbox by a remote watch (remote_watch.h), answers that the
 * task ended, wrote past the page's offsets (for TB_WAIT_CHANGE) or lost
 * its supervisor; the pause is then the time left, and the wait reads
 * nothing in between. -1 where none can be had (the supervisor not known
 * yet, no descriptor or watch left, a watch that failed before). With
 * *borrowed set the descriptor stays the wait's (its one subscription,
 * the same on every park: do not close it); else it is the caller's.
 * While parked the wait keeps nothing else open: tb_wait_pending closes
 * its box, and the next step connects again. Call it right before
 * tb_wait_pending. */
int tb_wait_wake_fd(struct tb_wait *wait, bool *borrowed);

/* True when tb_wait_wake_fd found no descriptor left in the budget for
 * one more parked wait (fd_budget.h): end the wait and refuse the call. */
bool tb_wait_refused(const struct tb_wait *wait);

/* A cheap probe of the task and, when it shows a change or a full view
 * is due, a new view. */
void tb_wait_step(struct tb_wait *wait);

/* Ends the wait: *result is the last view (or a tool error), returned
 * like tb_task_view; closes the box and frees wait. */
int tb_wait_end(struct tb_wait *wait, json_t **result);

#define TB_WAIT_MIN_MS 20
#define TB_WAIT_MAX_MS 500

/* The pause after a view that cost cost_us microseconds: ten times it,
 * clamped to TB_WAIT_MIN_MS..TB_WAIT_MAX_MS, and never past left_ms. */
uint32_t tb_wait_interval_ms(uint64_t cost_us, uint32_t left_ms);

#endif /* TB_TASK_WAIT_H */
