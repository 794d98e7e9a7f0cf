/* A pool of worker threads, started on demand, with a bounded job queue
 * and an optional lead: one long-running role (the server's reader) that
 * exactly one thread holds at a time. A job submitted by the lead's holder
 * runs on that same thread, with the lead lent to it: a job that ends
 * within the lend time (1 ms) leaves the lead where it was, and only a
 * longer one has it handed to an idle thread. So a quick job wakes no
 * other thread, and the lead never waits on a job for longer than the
 * lend time. Thread-safe. */
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
 * Called by the lead's holder while another thread is idle (one that can
 * take the lead over), it keeps the job for itself instead: the lead must
 * then return soon (see below). */
int tb_workers_submit(struct tb_workers *w, void (*fn)(void *), void *arg);

/* Queues fn(arg) like tb_workers_submit, in a second queue of the same
 * size that only such jobs use (never kept by the lead's holder), and
 * which a thread takes from only when the first is empty: work coming
 * back to the pool (a parked call's step) neither takes the room of new
 * calls, nor is refused because of them, nor goes before them. Returns 0, or -1
 * when that queue is full or the pool is stopping. */
int tb_workers_submit_spare(struct tb_workers *w, void (*fn)(void *),
                            void *arg);

/* Runs lead(ctx) on a pool thread, and again (on that thread or the next
 * holder) each time it returns false. lead returns false as soon as
 * tb_workers_yielding() says so (the pool then runs the kept job, lending
 * it the lead), or true when it has ended for good. Returns 0, or -1 when
 * no thread could be started. At most one lead per pool. Without a lend
 * timer (timerfd) the lead is handed on at once, as a log line says. */
int tb_workers_lead(struct tb_workers *w, bool (*lead)(void *ctx), void *ctx);

/* Sets how long a kept job holds the lead before it is handed on, in
 * nanoseconds (default 1 ms; tests). Call before tb_workers_lead. */
void tb_workers_lend_time(struct tb_workers *w, long ns);

/* True on the lead's holder once it has kept a job for itself. */
bool tb_workers_yielding(void);

/* Blocks until the lead has returned true. */
void tb_workers_wait_lead(struct tb_workers *w);

/* Runs every queued job to its end, joins the threads and frees w. The
 * lead, if any, must have ended. */
void tb_workers_drain(struct tb_workers *w);

#endif /* TB_WORKERS_H */
