/* The worker pool of workers.h: a ring of jobs (and one of spare jobs,
 * taken when the first is empty) and the lead under one
 * mutex. Threads are started on demand, when a job or the lead arrives and
 * no worker is idle, up to the pool's maximum; once started they stay
 * until the drain. An idle thread takes the lead before any queued job.
 *
 * A kept job runs with the lead lent to it: a one-shot timer (timerfd) is
 * armed for LEND_NS, and only when it fires does the watchdog thread free
 * the lead for an idle thread. A job that ends sooner disarms the timer
 * and its thread goes on leading: no other thread was woken, which on a
 * machine where every wake-up is costly is most of the saving. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/log.h"
#include "protocol/workers.h"

/* How long a kept job may hold the lead before another thread takes it
 * (so the reading, ping and cancellations, wait at most about this). */
#define LEND_NS 1000000L

struct job {
	void (*fn)(void *);
	void *arg;
	bool spare; /* queued by tb_workers_submit_spare */
};

struct tb_workers {
	pthread_mutex_t lock;
	pthread_cond_t ready; /* a job or the lead waits, or the pool stops */
	pthread_cond_t ended; /* the lead is over */
	struct job *ring;     /* cap + 1 slots: one is the kept job's */
	unsigned head, count, cap;
	struct job *spare_ring; /* cap slots: jobs of tb_workers_submit_spare,
	                           taken only when ring is empty */
	unsigned spare_head;
	unsigned spares; /* of the count, spare jobs */
	bool stopping;
	unsigned idle;     /* threads waiting for a job */
	unsigned nthreads; /* threads started */
	unsigned max;
	pthread_t *threads;
	bool (*lead)(void *ctx);
	void *lead_ctx;
	bool lead_free; /* the lead waits for a thread */
	bool lead_over; /* lead returned true */
	bool lent;      /* a kept job runs and its thread holds the lead */
	bool lending;   /* the watchdog runs: kept jobs borrow the lead */
	int timer_fd;   /* the lend timer, or -1 */
	long lend_ns;
	pthread_t watchdog;
	bool watchdog_started;
};

/* The pool whose lead this thread holds, and the job it kept. */
static _Thread_local struct tb_workers *holding;
static _Thread_local struct job kept;

static void push(struct tb_workers *w, struct job j)
{
	if (j.spare)
		w->spare_ring[(w->spare_head + w->spares++) % w->cap] = j;
	else
		w->ring[(w->head + w->count - w->spares) % (w->cap + 1)] = j;
	w->count++;
}

/* Takes the next job: a submitted one first, so new calls go before the
 * steps of parked ones. w->count > 0. */
static struct job pop(struct tb_workers *w)
{
	struct job j;

	if (w->count > w->spares) {
		j = w->ring[w->head];
		w->head = (w->head + 1) % (w->cap + 1);
	} else {
		j = w->spare_ring[w->spare_head];
		w->spare_head = (w->spare_head + 1) % w->cap;
		w->spares--;
	}
	w->count--;
	return j;
}

/* With w->lock held: starts one more thread when the lead and the queued
 * jobs outnumber the idle threads and the maximum allows it. A failure is
 * logged; the work waits for a running thread, if there is one. */
static void grow(struct tb_workers *w);

/* Arms (ns > 0) or disarms (0) the lend timer. */
static void set_timer(struct tb_workers *w, long ns)
{
	struct itimerspec its = {{0, 0}, {ns / 1000000000L, ns % 1000000000L}};

	if (timerfd_settime(w->timer_fd, 0, &its, NULL) < 0)
		tb_log(TB_LOG_ERROR, "worker pool: timer: %s", strerror(errno));
}

/* Runs the lead on this thread until it ends or passes on. A job the lead
 * kept runs here with the lead lent to it (see the top); when no thread is
 * idle any more, the job queues instead and the lead stays here. */
static void hold_lead(struct tb_workers *w)
{
	for (;;) {
		holding = w;
		bool over = w->lead(w->lead_ctx);
		holding = NULL;
		struct job j = kept;
		bool wake = false, lend = false;

		kept = (struct job){NULL, NULL, false};
		pthread_mutex_lock(&w->lock);
		if (over) {
			w->lead_over = true;
			pthread_cond_broadcast(&w->ended);
			pthread_mutex_unlock(&w->lock);
			return;
		}
		if (j.fn && w->idle <= w->count) {
			/* The idle thread seen at submit took a job queued
			 * meanwhile: queue the kept one (its slot is spare). */
			push(w, j);
			grow(w);
			j.fn = NULL;
		}
		if (j.fn && w->lending)
			lend = w->lent = true;
		else
			w->lead_free = true;
		wake = j.fn && !lend;
		pthread_mutex_unlock(&w->lock);
		if (wake)
			pthread_cond_signal(&w->ready);
		if (!j.fn)
			return; /* the lead is free: this thread or another */
		if (lend)
			set_timer(w, w->lend_ns);
		j.fn(j.arg);
		if (!lend)
			return;
		set_timer(w, 0);
		pthread_mutex_lock(&w->lock);
		bool still = w->lent;
		w->lent = false;
		pthread_mutex_unlock(&w->lock);
		if (!still)
			return; /* the watchdog passed the lead on */
	}
}

/* The lend timer's thread: when it fires with the lead still lent, frees
 * the lead for an idle thread (or a new one). */
static void *watchdog_main(void *arg)
{
	struct tb_workers *w = arg;
	uint64_t fired;

	for (;;) {
		ssize_t n = read(w->timer_fd, &fired, sizeof fired);
		if (n < 0 && errno == EINTR)
			continue;
		pthread_mutex_lock(&w->lock);
		bool stop = w->stopping || n != (ssize_t)sizeof fired;
		bool wake = false;
		if (w->lent) {
			w->lent = false;
			w->lead_free = true;
			grow(w);
			wake = w->idle > 0;
		}
		if (stop && !w->stopping)
			tb_log(TB_LOG_ERROR,
			       "worker pool: timer: %s; the lead is now handed "
			       "on at once",
			       n < 0 ? strerror(errno) : "short read");
		if (stop)
			w->lending = false;
		pthread_mutex_unlock(&w->lock);
		if (wake)
			pthread_cond_signal(&w->ready);
		if (stop)
			return NULL;
	}
}

static void *worker_main(void *arg)
{
	struct tb_workers *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->lead_free && w->count == 0 && !w->stopping) {
			w->idle++;
			pthread_cond_wait(&w->ready, &w->lock);
			w->idle--;
		}
		if (w->lead_free) {
			w->lead_free = false;
			pthread_mutex_unlock(&w->lock);
			hold_lead(w);
			pthread_mutex_lock(&w->lock);
			continue;
		}
		if (w->count == 0)
			break; /* stopping and drained */
		struct job j = pop(w);
		pthread_mutex_unlock(&w->lock);
		j.fn(j.arg);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void grow(struct tb_workers *w)
{
	if (w->count + w->lead_free <= w->idle || w->nthreads == w->max)
		return;
	int rc = pthread_create(&w->threads[w->nthreads], NULL, worker_main, w);
	if (rc)
		tb_log(TB_LOG_ERROR, "worker pool: thread %u: %s", w->nthreads,
		       strerror(rc));
	else
		w->nthreads++;
}

struct tb_workers *tb_workers_new(unsigned n, unsigned queue_max)
{
	struct tb_workers *w = calloc(1, sizeof *w);

	if (!w || n == 0 || queue_max == 0)
		goto err_alloc;
	w->cap = queue_max;
	w->max = n;
	w->ring = calloc(queue_max + 1, sizeof *w->ring);
	w->spare_ring = calloc(queue_max, sizeof *w->spare_ring);
	w->threads = calloc(n, sizeof *w->threads);
	if (!w->ring || !w->spare_ring || !w->threads)
		goto err_alloc;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->ready, NULL);
	pthread_cond_init(&w->ended, NULL);
	w->timer_fd = -1;
	w->lend_ns = LEND_NS;
	return w;
err_alloc:
	tb_log(TB_LOG_ERROR, "worker pool: cannot set up %u workers", n);
	if (w) {
		free(w->ring);
		free(w->spare_ring);
		free(w->threads);
	}
	free(w);
	return NULL;
}

/* Queues j (there is room) and starts a thread for it if need be;
 * *wake says whether an idle thread should be woken. Returns 0, or -1
 * when no thread could run it. Lock held. */
static int queue(struct tb_workers *w, struct job j, bool *wake)
{
	push(w, j);
	grow(w);
	if (w->nthreads == 0) {
		w->count--; /* no thread to run it */
		w->spares -= j.spare;
		return -1;
	}
	*wake = w->idle > 0;
	return 0;
}

int tb_workers_submit(struct tb_workers *w, void (*fn)(void *), void *arg)
{
	bool wake = false;
	int rc = -1;

	pthread_mutex_lock(&w->lock);
	if (holding == w && !kept.fn && !w->stopping && w->idle > w->count) {
		/* The lead's holder runs it once an idle thread has the lead.
		 */
		kept = (struct job){fn, arg, false};
		pthread_mutex_unlock(&w->lock);
		return 0;
	}
	if (!w->stopping && w->count - w->spares < w->cap)
		rc = queue(w, (struct job){fn, arg, false}, &wake);
	pthread_mutex_unlock(&w->lock);
	/* Signalled after the unlock, so the woken thread does not block at
	 * once on the mutex the submitter still holds. */
	if (wake)
		pthread_cond_signal(&w->ready);
	return rc;
}

int tb_workers_submit_spare(struct tb_workers *w, void (*fn)(void *), void *arg)
{
	bool wake = false;
	int rc = -1;

	pthread_mutex_lock(&w->lock);
	if (!w->stopping && w->spares < w->cap)
		rc = queue(w, (struct job){fn, arg, true}, &wake);
	pthread_mutex_unlock(&w->lock);
	if (wake)
		pthread_cond_signal(&w->ready);
	return rc;
}

void tb_workers_lend_time(struct tb_workers *w, long ns)
{
	w->lend_ns = ns;
}

bool tb_workers_yielding(void)
{
	return kept.fn != NULL;
}

/* Starts the lend timer and its watchdog; without them a kept job hands
 * the lead on at once (logged). */
static void start_lending(struct tb_workers *w)
{
	int rc;

	w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (w->timer_fd < 0) {
		tb_log(TB_LOG_WARN, "worker pool: no lend timer: %s",
		       strerror(errno));
		return;
	}
	rc = pthread_create(&w->watchdog, NULL, watchdog_main, w);
	if (rc) {
		tb_log(TB_LOG_WARN, "worker pool: no lend watchdog: %s",
		       strerror(rc));
		return;
	}
	w->watchdog_started = w->lending = true;
}

int tb_workers_lead(struct tb_workers *w, bool (*lead)(void *ctx), void *ctx)
{
	bool wake;

	start_lending(w);
	pthread_mutex_lock(&w->lock);
	w->lead = lead;
	w->lead_ctx = ctx;
	w->lead_free = true;
	grow(w);
	wake = w->idle > 0;
	int rc = w->nthreads > 0 ? 0 : -1;
	if (rc)
		w->lead_free = false;
	pthread_mutex_unlock(&w->lock);
	if (wake)
		pthread_cond_signal(&w->ready);
	return rc;
}

void tb_workers_wait_lead(struct tb_workers *w)
{
	pthread_mutex_lock(&w->lock);
	while (!w->lead_over)
		pthread_cond_wait(&w->ended, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

void tb_workers_drain(struct tb_workers *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_broadcast(&w->ready);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	if (w->watchdog_started) {
		set_timer(w, 1); /* fires at once: the watchdog sees the stop */
		pthread_join(w->watchdog, NULL);
	}
	if (w->timer_fd >= 0)
		close(w->timer_fd);
	pthread_cond_destroy(&w->ready);
	pthread_cond_destroy(&w->ended);
	pthread_mutex_destroy(&w->lock);
	free(w->ring);
	free(w->spare_ring);
	free(w->threads);
	free(w);
}
