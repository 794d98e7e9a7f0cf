/* The worker pool of workers.h: a ring of jobs and the lead under one
 * mutex. Threads are started on demand, when a job or the lead arrives and
 * no worker is idle, up to the pool's maximum; once started they stay
 * until the drain. An idle thread takes the lead before any queued job. */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "workers.h"

struct job {
	void (*fn)(void *);
	void *arg;
};

struct tb_workers {
	pthread_mutex_t lock;
	pthread_cond_t ready; /* a job or the lead waits, or the pool stops */
	pthread_cond_t ended; /* the lead is over */
	struct job *ring;     /* cap + 1 slots: one is the kept job's */
	unsigned head, count, cap;
	bool stopping;
	unsigned idle;     /* threads waiting for a job */
	unsigned nthreads; /* threads started */
	unsigned max;
	pthread_t *threads;
	bool (*lead)(void *ctx);
	void *lead_ctx;
	bool lead_free; /* the lead waits for a thread */
	bool lead_over; /* lead returned true */
};

/* The pool whose lead this thread holds, and the job it kept. */
static _Thread_local struct tb_workers *holding;
static _Thread_local struct job kept;

static void push(struct tb_workers *w, struct job j)
{
	w->ring[(w->head + w->count) % (w->cap + 1)] = j;
	w->count++;
}

/* With w->lock held: starts one more thread when the lead and the queued
 * jobs outnumber the idle threads and the maximum allows it. A failure is
 * logged; the work waits for a running thread, if there is one. */
static void grow(struct tb_workers *w);

/* Runs the lead once on this thread, then passes it on: to an idle thread
 * when the lead kept a job (which then runs here), else back to the pool. */
static void hold_lead(struct tb_workers *w)
{
	holding = w;
	bool over = w->lead(w->lead_ctx);
	holding = NULL;
	struct job j = kept;
	bool wake = false;

	kept = (struct job){NULL, NULL};
	pthread_mutex_lock(&w->lock);
	if (over) {
		w->lead_over = true;
		pthread_cond_broadcast(&w->ended);
	} else {
		w->lead_free = true;
		wake = w->idle > w->count;
		if (j.fn && !wake) {
			/* The idle thread seen at submit took a job queued
			 * meanwhile: queue the kept one (its slot is spare)
			 * and let this thread take the lead back. */
			push(w, j);
			grow(w);
			j.fn = NULL;
		}
	}
	pthread_mutex_unlock(&w->lock);
	if (wake)
		pthread_cond_signal(&w->ready);
	if (j.fn)
		j.fn(j.arg);
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
		struct job j = w->ring[w->head];
		w->head = (w->head + 1) % (w->cap + 1);
		w->count--;
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
	w->threads = calloc(n, sizeof *w->threads);
	if (!w->ring || !w->threads)
		goto err_alloc;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->ready, NULL);
	pthread_cond_init(&w->ended, NULL);
	return w;
err_alloc:
	tb_log(TB_LOG_ERROR, "worker pool: cannot set up %u workers", n);
	if (w) {
		free(w->ring);
		free(w->threads);
	}
	free(w);
	return NULL;
}

int tb_workers_submit(struct tb_workers *w, void (*fn)(void *), void *arg)
{
	bool wake = false;
	int rc = -1;

	pthread_mutex_lock(&w->lock);
	if (holding == w && !kept.fn && !w->stopping && w->idle > w->count) {
		/* The lead's holder runs it once an idle thread has the lead.
		 */
		kept = (struct job){fn, arg};
		pthread_mutex_unlock(&w->lock);
		return 0;
	}
	if (!w->stopping && w->count < w->cap) {
		push(w, (struct job){fn, arg});
		grow(w);
		if (w->nthreads == 0)
			w->count--; /* no thread to run it */
		else
			rc = 0;
		wake = w->idle > 0;
	}
	pthread_mutex_unlock(&w->lock);
	/* Signalled after the unlock, so the woken thread does not block at
	 * once on the mutex the submitter still holds. */
	if (wake)
		pthread_cond_signal(&w->ready);
	return rc;
}

bool tb_workers_yielding(void)
{
	return kept.fn != NULL;
}

int tb_workers_lead(struct tb_workers *w, bool (*lead)(void *ctx), void *ctx)
{
	bool wake;

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
	pthread_cond_destroy(&w->ready);
	pthread_cond_destroy(&w->ended);
	pthread_mutex_destroy(&w->lock);
	free(w->ring);
	free(w->threads);
	free(w);
}
