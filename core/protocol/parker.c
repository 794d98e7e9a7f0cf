/* tb_parker (parker.h): a binary min-heap of parked jobs ordered by when
 * they are due, and one thread that sleeps until the earliest and hands
 * the due ones to the pool. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "protocol/parker.h"
#include "protocol/workers.h"

/* A job the pool cannot take now (its queue is full) is tried again this
 * much later. */
#define RETRY_NS 2000000u

struct tb_parker {
	struct tb_workers *pool;
	pthread_mutex_t lock;
	pthread_cond_t changed; /* the earliest job or the stop changed */
	struct tb_park **heap;
	size_t n, cap;
	bool stopping;
	pthread_t thread;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void put(struct tb_parker *p, size_t i, struct tb_park *e)
{
	p->heap[i] = e;
	e->slot = i;
}

static void sift_up(struct tb_parker *p, size_t i)
{
	struct tb_park *e = p->heap[i];

	while (i > 0 && p->heap[(i - 1) / 2]->due_ns > e->due_ns) {
		put(p, i, p->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	put(p, i, e);
}

static void sift_down(struct tb_parker *p, size_t i)
{
	struct tb_park *e = p->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= p->n)
			break;
		if (c + 1 < p->n && p->heap[c + 1]->due_ns < p->heap[c]->due_ns)
			c++;
		if (p->heap[c]->due_ns >= e->due_ns)
			break;
		put(p, i, p->heap[c]);
		i = c;
	}
	put(p, i, e);
}

/* Takes e out of the heap; lock held, e parked. */
static void unlink_entry(struct tb_parker *p, struct tb_park *e)
{
	size_t i = e->slot;
	struct tb_park *last = p->heap[--p->n];

	e->parked = false;
	if (last == e)
		return;
	put(p, i, last);
	sift_up(p, i);
	sift_down(p, last->slot);
}

/* Hands every due job to the pool; returns when the earliest left is
 * due (UINT64_MAX when none). Lock held. */
static uint64_t hand_due(struct tb_parker *p)
{
	uint64_t now = now_ns();

	while (p->n > 0 && (p->stopping || p->heap[0]->due_ns <= now)) {
		struct tb_park *e = p->heap[0];
		unlink_entry(p, e);
		if (tb_workers_submit_spare(p->pool, e->fn, e->arg) == 0)
			continue;
		if (p->stopping) {
			/* The pool refuses work only once it is draining,
			 * after this parker has stopped; never here. */
			tb_log(TB_LOG_ERROR, "parker: a job could not run");
			continue;
		}
		/* The queue is full: back in, a little later. */
		e->due_ns = now + RETRY_NS;
		e->parked = true;
		put(p, p->n++, e);
		sift_up(p, e->slot);
		break;
	}
	return p->n > 0 ? p->heap[0]->due_ns : UINT64_MAX;
}

static void *timer_thread(void *arg)
{
	struct tb_parker *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		uint64_t next = hand_due(p);
		if (p->stopping && p->n == 0)
			break;
		if (next == UINT64_MAX) {
			pthread_cond_wait(&p->changed, &p->lock);
			continue;
		}
		struct timespec until = {(time_t)(next / 1000000000u),
		                         (long)(next % 1000000000u)};
		pthread_cond_timedwait(&p->changed, &p->lock, &until);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct tb_parker *tb_parker_new(struct tb_workers *pool)
{
	struct tb_parker *p = calloc(1, sizeof *p);
	pthread_condattr_t attr;
	int err;

	if (!p) {
		tb_log(TB_LOG_ERROR, "parker: out of memory");
		return NULL;
	}
	p->pool = pool;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->changed, &attr);
	pthread_condattr_destroy(&attr);
	err = pthread_create(&p->thread, NULL, timer_thread, p);
	if (err) {
		tb_log(TB_LOG_ERROR, "parker: thread: %s", strerror(err));
		pthread_cond_destroy(&p->changed);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	return p;
}

/* Grows the heap to hold one more; lock held. */
static int reserve(struct tb_parker *p)
{
	if (p->n < p->cap)
		return 0;
	size_t cap = p->cap ? p->cap * 2 : 64;
	struct tb_park **h = realloc(p->heap, cap * sizeof *h);
	if (!h)
		return -1;
	p->heap = h;
	p->cap = cap;
	return 0;
}

int tb_parker_add(struct tb_parker *p, struct tb_park *e, uint32_t ms)
{
	int rc = -1;

	pthread_mutex_lock(&p->lock);
	if (!p->stopping && !e->parked && reserve(p) == 0) {
		e->due_ns = now_ns() + (uint64_t)ms * 1000000u;
		e->parked = true;
		put(p, p->n++, e);
		sift_up(p, e->slot);
		if (e->slot == 0)
			pthread_cond_signal(&p->changed);
		rc = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void tb_parker_wake(struct tb_parker *p, struct tb_park *e)
{
	pthread_mutex_lock(&p->lock);
	if (e->parked) {
		e->due_ns = 0;
		sift_up(p, e->slot);
		pthread_cond_signal(&p->changed);
	}
	pthread_mutex_unlock(&p->lock);
}

size_t tb_parker_count(struct tb_parker *p)
{
	pthread_mutex_lock(&p->lock);
	size_t n = p->n;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void tb_parker_free(struct tb_parker *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_signal(&p->changed);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	free(p->heap);
	free(p);
}
