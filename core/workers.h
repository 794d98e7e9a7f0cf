/* A pool of worker threads, started on demand, with a bounded job queue
 * and an optional lead: one long-running role (the server's reader) that
 * exactly one thread holds at a time. A job submitted by the lead's holder
 * runs on that same thread, which first hands the lead to an idle thread;
 * the wake-up of that thread is then off the job's path. Thread-safe. */
#ifndef TB_WORKERS_H
#define TB_WORKERS_H

#include <stdbool.h>

struct tb_workers;

/* Sets up a pool of at most n threads (n >= 1) with room for queue_max
 * waiting jobs. No thread runs yet: one is started when a job or the lead
 * finds no idle thread. Returns NULL (and logs why) on failure. */
struct tb_workers *tb_workers_new(unsigned n, unsigned queue_max);

/* Queues fn(arg). Returns 0, or -1 when the queue is full or the pool is
 * stopping; the job is then not run. Never blocks on a full queue.
 * Called by the lead's holder while another thread is idle, it keeps the
 * job for itself instead: the lead must then return soon (see below). */
int tb_workers_submit(struct tb_workers *w, void (*fn)(void *), void *arg);

/* Runs lead(ctx) on a pool thread, and again on the next holder each time
 * it returns false. lead returns false as soon as tb_workers_yielding()
 * says so (the pool then hands the lead on and runs the kept job), or
 * true when it has ended for good. Returns 0, or -1 when no thread could
 * be started. At most one lead per pool. */
int tb_workers_lead(struct tb_workers *w, bool (*lead)(void *ctx), void *ctx);

/* True on the lead's holder once it has kept a job for itself. */
bool tb_workers_yielding(void);

/* Blocks until the lead has returned true. */
void tb_workers_wait_lead(struct tb_workers *w);

/* Runs every queued job to its end, joins the threads and frees w. The
 * lead, if any, must have ended. */
void tb_workers_drain(struct tb_workers *w);

#endif /* TB_WORKERS_H */
