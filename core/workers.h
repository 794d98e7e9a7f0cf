/* A pool of worker threads, started on demand, with a bounded job queue.
 * Thread-safe. */
#ifndef TB_WORKERS_H
#define TB_WORKERS_H

struct tb_workers;

/* Sets up a pool of at most n threads (n >= 1) with room for queue_max
 * waiting jobs. No thread runs yet: one is started when a job finds no idle
 * thread. Returns NULL (and logs why) on failure. */
struct tb_workers *tb_workers_new(unsigned n, unsigned queue_max);

/* Queues fn(arg). Returns 0, or -1 when the queue is full or the pool is
 * stopping; the job is then not run. Never blocks on a full queue. */
int tb_workers_submit(struct tb_workers *w, void (*fn)(void *), void *arg);

/* Runs every queued job to its end, joins the threads and frees w. */
void tb_workers_drain(struct tb_workers *w);

#endif /* TB_WORKERS_H */
