/* A per-instance pool of libcurl multi handles, so that HTTP connections
 * (and their TLS sessions) outlive one request: each multi handle keeps its
 * own connection cache, a request borrows a whole multi handle for itself,
 * and gives it back with the idle connections still open. A multi handle is
 * only ever used by the thread that borrowed it, so nothing in libcurl is
 * shared between threads. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "e2b_int.h"

#define TB_POOL_IDLE_MAX 8 /* idle multi handles kept; the rest are freed */
#define TB_POOL_HOST_CONNS                                                     \
	16 /* parallel connections to one host (and idle                       \
	      ones kept) per multi handle; more transfers                      \
	      wait for one of them */

struct tb_http_pool {
	pthread_mutex_t lock;
	CURLM *idle[TB_POOL_IDLE_MAX];
	size_t n_idle;
};

struct tb_http_pool *tb_http_pool_new(void)
{
	struct tb_http_pool *pool = calloc(1, sizeof *pool);

	if (pool && pthread_mutex_init(&pool->lock, NULL) != 0) {
		free(pool);
		pool = NULL;
	}
	return pool;
}

void tb_http_pool_free(struct tb_http_pool *pool)
{
	size_t i;

	if (!pool)
		return;
	for (i = 0; i < pool->n_idle; i++)
		curl_multi_cleanup(pool->idle[i]);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}

CURLM *tb_http_pool_take(struct tb_http_pool *pool)
{
	CURLM *multi = NULL;

	if (pool) {
		pthread_mutex_lock(&pool->lock);
		if (pool->n_idle > 0)
			multi = pool->idle[--pool->n_idle];
		pthread_mutex_unlock(&pool->lock);
	}
	if (multi)
		return multi;
	multi = curl_multi_init();
	/* A batch to one HTTP/2 endpoint shares a connection; HTTP/1.1 opens
	 * parallel ones. */
	if (multi) {
		curl_multi_setopt(multi, CURLMOPT_PIPELINING,
		                  (long)CURLPIPE_MULTIPLEX);
		curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS,
		                  (long)TB_POOL_HOST_CONNS);
		curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS,
		                  (long)TB_POOL_HOST_CONNS);
	}
	return multi;
}

void tb_http_pool_give(struct tb_http_pool *pool, CURLM *multi)
{
	if (!multi)
		return;
	if (pool) {
		pthread_mutex_lock(&pool->lock);
		if (pool->n_idle < TB_POOL_IDLE_MAX) {
			pool->idle[pool->n_idle++] = multi;
			multi = NULL;
		}
		pthread_mutex_unlock(&pool->lock);
	}
	if (multi)
		curl_multi_cleanup(multi);
}
