/* Parked calls: calls that wait for something without a thread of their
 * own. One thread keeps them in order of when they are due, watches the
 * descriptors they wait on (epoll), and hands each, when due, woken or its
 * descriptor readable, to the worker pool as a short job. A thousand
 * waiting calls thus cost a thousand small records, not a thousand
 * threads. Thread-safe. */
#ifndef TB_PARKER_H
#define TB_PARKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tb_workers;
struct tb_parker;

/* One parked job, embedded in its owner; zero it before the first use. */
struct tb_park {
	void (*fn)(void *arg); /* run on a worker when due */
	void *arg;
	uint64_t due_ns; /* CLOCK_MONOTONIC */
	size_t slot;     /* in the heap, while parked (the parker's) */
	int fd;          /* watched while parked, or -1 (the parker's) */
	bool parked;     /* the parker's, under its lock */
	bool borrowed;   /* set before adding: the fd stays the caller's (the
	                    parker watches it, never closes it) */
};

/* Starts the timer thread for pool. Returns NULL (and logs why) on
 * failure. */
struct tb_parker *tb_parker_new(struct tb_workers *pool);

/* Parks e: e->fn(e->arg) runs on a pool worker once ms have passed, or
 * sooner when woken. Returns 0, or -1 when the parker is stopping (the
 * caller then runs the job itself). */
int tb_parker_add(struct tb_parker *p, struct tb_park *e, uint32_t ms);

/* tb_parker_add, and e is also due as soon as fd polls readable. Takes fd
 * (closed once e leaves the parker, or at once on failure) unless
 * e->borrowed, when the caller keeps it open while e is parked; -1 is
 * none. */
int tb_parker_add_fd(struct tb_parker *p, struct tb_park *e, uint32_t ms,
                     int fd);

/* Makes a parked e due now; nothing when it is not parked. */
void tb_parker_wake(struct tb_parker *p, struct tb_park *e);

/* How many jobs are parked now (a relaxed read, without the lock). */
size_t tb_parker_count(struct tb_parker *p);

/* Stops the parker: every job still parked is handed to the pool at
 * once, later tb_parker_add calls return -1, and the timer thread is
 * joined. Call before draining the pool. NULL is a no-op. */
void tb_parker_free(struct tb_parker *p);

#endif /* TB_PARKER_H */
