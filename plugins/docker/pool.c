/* docker provider: keep-alive. Each request runs on a multi handle taken
 * from the instance's pool for the time of the request, by one thread; the
 * multi handle's connection cache keeps the engine's connections open for
 * the next request that takes it. libcurl's shared connection cache
 * (CURLSH) is not safe across threads, so connections are never shared:
 * a multi handle and its connections belong to one request at a time. */
#include "config.h"

#include "docker.h"

/* Connections a multi handle keeps open when idle (a batch may use more
 * at once; those are closed after it). */
#define KEEP_PER_MULTI 8L

void tb_dk_pool_init(struct tb_dk_pool *p)
{
	pthread_mutex_init(&p->lock, NULL);
	p->n_idle = 0;
}

void tb_dk_pool_free(struct tb_dk_pool *p)
{
	while (p->n_idle)
		curl_multi_cleanup(p->idle[--p->n_idle]);
	pthread_mutex_destroy(&p->lock);
}

CURLM *tb_dk_pool_take(struct tb_dk *dk)
{
	struct tb_dk_pool *p = &dk->pool;
	CURLM *m = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->n_idle)
		m = p->idle[--p->n_idle];
	pthread_mutex_unlock(&p->lock);
	if (m)
		return m;
	m = curl_multi_init();
	if (m)
		curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, KEEP_PER_MULTI);
	return m;
}

void tb_dk_pool_give(struct tb_dk *dk, CURLM *m)
{
	struct tb_dk_pool *p = &dk->pool;

	pthread_mutex_lock(&p->lock);
	if (p->n_idle < TB_DK_POOL_MAX) {
		p->idle[p->n_idle++] = m;
		m = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	if (m)
		curl_multi_cleanup(m);
}
