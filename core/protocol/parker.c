/* tb_parker (parker.h): a binary min-heap of parked jobs ordered by when
 * they are due, and one thread that waits in epoll for the earliest, a
 * watched descriptor or a change, and hands the due jobs to the pool. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "protocol/parker.h"
#include "protocol/workers.h"

/* A job the pool cannot take now (its spare queue is full) is tried again
 * this much later. */
#define RETRY_NS 2000000u
#define EVENTS 64

struct tb_parker {
	struct tb_workers *pool;
	pthread_mutex_t lock;
	struct tb_park **heap;
	size_t n, cap; /* n: written atomically under the lock */
	bool stopping;
	int epoll_fd;
	int change_fd; /* an eventfd: the earliest job or the stop changed */
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

/* Tells the thread that the earliest job or the stop changed. */
static void signal_change(struct tb_parker *p)
{
	uint64_t one = 1;

	if (write(p->change_fd, &one, sizeof one) < 0) {
		/* the counter is full: a wake-up is pending anyway */
	}
}

/* Makes a parked e due now; lock held. */
static void make_due(struct tb_parker *p, struct tb_park *e)
{
	e->due_ns = 0;
	sift_up(p, e->slot);
}

/* Takes e out of the heap and stops watching its descriptor, which it
 * returns (or -1); lock held, e parked. */
static int detach(struct tb_parker *p, struct tb_park *e)
{
	size_t i = e->slot, n = p->n - 1;
	struct tb_park *last = p->heap[n];
	int fd = e->fd;

	__atomic_store_n(&p->n, n, __ATOMIC_RELAXED); /* tb_parker_count */

	e->parked = false;
	e->fd = -1;
	if (fd >= 0)
		epoll_ctl(p->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
	if (last != e) {
		put(p, i, last);
		sift_up(p, i);
		sift_down(p, last->slot);
	}
	return fd;
}

/* Puts e (not parked) in the heap, due at due_ns, watching fd (taken; -1
 * is none, and one epoll cannot take is closed); lock held, room made. */
static void attach(struct tb_parker *p, struct tb_park *e, uint64_t due_ns,
                   int fd)
{
	e->due_ns = due_ns;
	e->parked = true;
	e->fd = -1;
	if (fd >= 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = e};
		if (epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0)
			e->fd = fd;
		else if (!e->borrowed)
			close(fd); /* not watched: the timer alone wakes e */
	}
	put(p, p->n, e);
	__atomic_store_n(&p->n, p->n + 1, __ATOMIC_RELAXED);
	sift_up(p, e->slot);
}

/* Hands every due job to the pool; returns when the earliest left is
 * due (UINT64_MAX when none). Lock held. Once handed on, a job may run
 * and free its entry at once: e is not touched after a submit that
 * succeeded. */
static uint64_t hand_due(struct tb_parker *p)
{
	uint64_t now = now_ns();

	while (p->n > 0 && (p->stopping || p->heap[0]->due_ns <= now)) {
		struct tb_park *e = p->heap[0];
		int fd = detach(p, e);
		bool borrowed = e->borrowed;
		if (tb_workers_submit_spare(p->pool, e->fn, e->arg) == 0) {
			if (fd >= 0 && !borrowed)
				close(fd);
			continue;
		}
		/* The spare queue is full (a thousand steps fall due at
		 * once, or the stop hands every job on): a little later. */
		attach(p, e, now + RETRY_NS, fd);
		break;
	}
	return p->n > 0 ? p->heap[0]->due_ns : UINT64_MAX;
}

/* epoll_wait's timeout for a job due at next: at least 1 ms when it is in
 * the future, rounded up; -1 for none. */
static int timeout_ms(uint64_t next)
{
	if (next == UINT64_MAX)
		return -1;
	uint64_t now = now_ns();
	if (next <= now)
		return 0;
	uint64_t ms = (next - now + 999999u) / 1000000u;
	return ms > 3600000u ? 3600000 : (int)ms;
}

static void *parker_thread(void *arg)
{
	struct tb_parker *p = arg;
	struct epoll_event ev[EVENTS];

	pthread_mutex_lock(&p->lock);
	for (;;) {
		uint64_t next = hand_due(p);
		if (p->stopping && p->n == 0)
			break;
		pthread_mutex_unlock(&p->lock);
		int n = epoll_wait(p->epoll_fd, ev, EVENTS, timeout_ms(next));
		pthread_mutex_lock(&p->lock);
		for (int i = 0; i < n; i++) {
			struct tb_park *e = ev[i].data.ptr;
			if (!e) {
				uint64_t count;
				if (read(p->change_fd, &count, sizeof count) <
				    0) {
					/* nothing pending after all */
				}
				continue;
			}
			/* Only this thread takes entries out, and only
			 * after the events were seen: e is still parked. */
			if (e->parked)
				make_due(p, e);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct tb_parker *tb_parker_new(struct tb_workers *pool)
{
	struct tb_parker *p = calloc(1, sizeof *p);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	int err;

	if (!p) {
		tb_log(TB_LOG_ERROR, "parker: out of memory");
		return NULL;
	}
	p->pool = pool;
	pthread_mutex_init(&p->lock, NULL);
	p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	p->change_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->epoll_fd < 0 || p->change_fd < 0 ||
	    epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, p->change_fd, &ev) < 0) {
		tb_log(TB_LOG_ERROR, "parker: epoll: %s", strerror(errno));
		goto fail;
	}
	err = pthread_create(&p->thread, NULL, parker_thread, p);
	if (err) {
		tb_log(TB_LOG_ERROR, "parker: thread: %s", strerror(err));
		goto fail;
	}
	return p;
fail:
	if (p->epoll_fd >= 0)
		close(p->epoll_fd);
	if (p->change_fd >= 0)
		close(p->change_fd);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return NULL;
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

int tb_parker_add_fd(struct tb_parker *p, struct tb_park *e, uint32_t ms,
                     int fd)
{
	int rc = -1;

	pthread_mutex_lock(&p->lock);
	if (!p->stopping && !e->parked && reserve(p) == 0) {
		attach(p, e, now_ns() + (uint64_t)ms * 1000000u, fd);
		fd = -1;
		if (e->slot == 0)
			signal_change(p);
		rc = 0;
	}
	pthread_mutex_unlock(&p->lock);
	if (fd >= 0 && !e->borrowed)
		close(fd);
	return rc;
}

int tb_parker_add(struct tb_parker *p, struct tb_park *e, uint32_t ms)
{
	return tb_parker_add_fd(p, e, ms, -1);
}

void tb_parker_wake(struct tb_parker *p, struct tb_park *e)
{
	pthread_mutex_lock(&p->lock);
	if (e->parked) {
		make_due(p, e);
		signal_change(p);
	}
	pthread_mutex_unlock(&p->lock);
}

size_t tb_parker_count(struct tb_parker *p)
{
	/* Read per HTTP request for admission: no lock. */
	return __atomic_load_n(&p->n, __ATOMIC_RELAXED);
}

void tb_parker_free(struct tb_parker *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	signal_change(p);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	close(p->epoll_fd);
	close(p->change_fd);
	pthread_mutex_destroy(&p->lock);
	free(p->heap);
	free(p);
}
