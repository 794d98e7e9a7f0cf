/* The worker pool of workers.h: a ring of jobs under one mutex. Threads are
 * started on demand, when a job arrives and no worker is idle, up to the
 * pool's maximum; once started they stay until the drain. */
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
	pthread_cond_t ready;
	struct job *ring;
	unsigned head, count, cap;
	bool stopping;
	unsigned idle;     /* threads waiting for a job */
	unsigned nthreads; /* threads started */
	unsigned max;
	pthread_t *threads;
};

static void *worker_main(void *arg)
{
	struct tb_workers *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->count == 0 && !w->stopping) {
			w->idle++;
			pthread_cond_wait(&w->ready, &w->lock);
			w->idle--;
		}
		if (w->count == 0)
			break; /* stopping and drained */
		struct job j = w->ring[w->head];
		w->head = (w->head + 1) % w->cap;
		w->count--;
		pthread_mutex_unlock(&w->lock);
		j.fn(j.arg);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct tb_workers *tb_workers_new(unsigned n, unsigned queue_max)
{
	struct tb_workers *w = calloc(1, sizeof *w);

	if (!w || n == 0 || queue_max == 0)
		goto err_alloc;
	w->cap = queue_max;
	w->max = n;
	w->ring = calloc(queue_max, sizeof *w->ring);
	w->threads = calloc(n, sizeof *w->threads);
	if (!w->ring || !w->threads)
		goto err_alloc;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->ready, NULL);
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

/* With w->lock held: starts one more thread when the queued jobs outnumber
 * the idle threads and the maximum allows it. A failure is logged; the job
 * waits for a running thread, if there is one. */
static void grow(struct tb_workers *w)
{
	if (w->count <= w->idle || w->nthreads == w->max)
		return;
	int rc = pthread_create(&w->threads[w->nthreads], NULL, worker_main, w);
	if (rc)
		tb_log(TB_LOG_ERROR, "worker pool: thread %u: %s", w->nthreads,
		       strerror(rc));
	else
		w->nthreads++;
}

int tb_workers_submit(struct tb_workers *w, void (*fn)(void *), void *arg)
{
	bool wake = false;
	int rc = -1;

	pthread_mutex_lock(&w->lock);
	if (!w->stopping && w->count < w->cap) {
		w->ring[(w->head + w->count) % w->cap] = (struct job){fn, arg};
		w->count++;
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
	pthread_mutex_destroy(&w->lock);
	free(w->ring);
	free(w->threads);
	free(w);
}
