/* The worker pool of workers.h: a ring of jobs under one mutex. */
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
	unsigned nthreads;
	pthread_t *threads;
};

static void *worker_main(void *arg)
{
	struct tb_workers *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->count == 0 && !w->stopping)
			pthread_cond_wait(&w->ready, &w->lock);
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
	w->ring = calloc(queue_max, sizeof *w->ring);
	w->threads = calloc(n, sizeof *w->threads);
	if (!w->ring || !w->threads)
		goto err_alloc;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->ready, NULL);
	for (; w->nthreads < n; w->nthreads++) {
		int rc = pthread_create(&w->threads[w->nthreads], NULL,
		                        worker_main, w);
		if (rc) {
			tb_log(TB_LOG_ERROR, "worker pool: thread %u: %s",
			       w->nthreads, strerror(rc));
			tb_workers_drain(w);
			return NULL;
		}
	}
	return w;
err_alloc:
	tb_log(TB_LOG_ERROR, "worker pool: cannot start %u workers", n);
	if (w) {
		free(w->ring);
		free(w->threads);
	}
	free(w);
	return NULL;
}

int tb_workers_submit(struct tb_workers *w, void (*fn)(void *), void *arg)
{
	int rc = -1;

	pthread_mutex_lock(&w->lock);
	if (!w->stopping && w->count < w->cap) {
		w->ring[(w->head + w->count) % w->cap] = (struct job){fn, arg};
		w->count++;
		rc = 0;
	}
	pthread_mutex_unlock(&w->lock);
	/* Signalled after the unlock, so the woken thread does not block at
	 * once on the mutex the submitter still holds. */
	if (rc == 0)
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
