/* A wait's watch on a task whose supervisor the host cannot see (a provider
 * without TASKBOX_FEATURE_HOST_PIDS). The waits on one sandbox share one
 * watch: a thread that runs the supervisor's `watch` verb in the sandbox,
 * through the provider's exec, with every task and offset they wait for;
 * the verb answers when any task ends, a log grows past an offset or a
 * supervisor is gone, and its answer wakes the waits it concerns through
 * their descriptors, so a call learns of the end in the time the answer
 * takes to arrive instead of at its next look. A wait that joins with
 * something the running verb lacks has it run again (after a pause that
 * gathers the waits joining with it); a verb whose exec fails is run
 * again, up to three times in a row; a watch with no wait left ends. */
#ifndef TB_REMOTE_WATCH_H
#define TB_REMOTE_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "tasks/box.h"
#include "tasks/sup_client.h"

/* The longest wait_s of one watch (the verb's --wait allows 60). */
#define TB_REMOTE_WATCH_MAX_S 60u

/* How a watch ended. */
enum tb_remote_watch_end {
	TB_REMOTE_WATCH_RUNNING,  /* not yet */
	TB_REMOTE_WATCH_ANSWERED, /* the verb answered: look at the task */
	TB_REMOTE_WATCH_FAILED,   /* no answer for this wait (no exec, no such
	                             verb there, no connection, a missing
	                             task): look, and do not watch again */
};

struct tb_remote_watch;

/* Starts watching TASK_ID in BOX's sandbox for a wait, asking the verb
 * REQ (wait_s at most TB_REMOTE_WATCH_MAX_S): joins the sandbox's watch, or
 * starts it (on a connection of its own). NULL when none can start now:
 * the box's instance watches its "watches" sandboxes already (each holds a
 * thread blocked in the provider's exec and a connection; the waits on
 * other sandboxes look at their task between pauses), the whole process
 * has an eighth of its soft RLIMIT_NOFILE past 64 running, no memory, no
 * thread. */
struct tb_remote_watch *
tb_remote_watch_start(const struct tb_box *box, const char *task_id,
                      const struct tb_sup_wait_req *req);

/* A descriptor (the watch's own: do not close it) that polls readable once
 * the watch has ended. */
int tb_remote_watch_fd(const struct tb_remote_watch *w);

/* How it ended so far. */
enum tb_remote_watch_end tb_remote_watch_state(const struct tb_remote_watch *w);

/* The verb's answer (its record, with the pages asked for) once the state
 * is TB_REMOTE_WATCH_ANSWERED, and what it was asked; the watch's own,
 * valid until tb_remote_watch_stop. */
const struct tb_task_record *
tb_remote_watch_answer(const struct tb_remote_watch *w,
                       const struct tb_sup_wait_req **req);

/* Lets the wait's watch go: the sandbox's watch ends with its last wait
 * (its exec is abandoned within about 100 ms; the verb, superseded or not,
 * may go on in the sandbox until its wait_s pass). */
void tb_remote_watch_stop(struct tb_remote_watch *w);

/* Stops every watch and waits for their threads to end: before the
 * providers are unloaded. */
void tb_remote_watch_drain(void);

#endif /* TB_REMOTE_WATCH_H */
