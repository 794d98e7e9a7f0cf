/* What connect learnt about a sandbox (its object and pod names, its UID,
 * its creation time), kept for settings.connection_reuse seconds so that
 * the next connect to it makes no request. A sandbox deleted meanwhile then
 * shows on the first op (exec's upgrade gets a 404: TASKBOX_E_GONE). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "k8s_int.h"

#define CACHE_SLOTS 64

struct slot {
	struct tb_k8s_conn c; /* inst unused */
	uint64_t until_ms;
};

struct tb_k8s_cache {
	pthread_mutex_t lock;
	uint32_t ttl_s;
	struct slot slots[CACHE_SLOTS];
};

struct tb_k8s_cache *tb_k8s_cache_new(uint32_t ttl_s)
{
	struct tb_k8s_cache *cache = calloc(1, sizeof *cache);

	if (!cache)
		return NULL;
	pthread_mutex_init(&cache->lock, NULL);
	cache->ttl_s = ttl_s;
	return cache;
}

void tb_k8s_cache_free(struct tb_k8s_cache *cache)
{
	if (!cache)
		return;
	pthread_mutex_destroy(&cache->lock);
	free(cache);
}

int tb_k8s_cache_get(struct tb_k8s_cache *cache, const char *id,
                     struct tb_k8s_conn *c)
{
	uint64_t now = tb_k8s_now_ms();
	int found = 0;
	size_t i;

	if (!cache || !cache->ttl_s)
		return 0;
	pthread_mutex_lock(&cache->lock);
	for (i = 0; i < CACHE_SLOTS; i++) {
		struct slot *s = &cache->slots[i];
		if (s->until_ms > now && strcmp(s->c.id, id) == 0) {
			struct tb_k8s *inst = c->inst;
			*c = s->c;
			c->inst = inst;
			c->from_cache = 1;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&cache->lock);
	return found;
}

void tb_k8s_cache_put(struct tb_k8s_cache *cache, const struct tb_k8s_conn *c)
{
	uint64_t now = tb_k8s_now_ms();
	struct slot *pick = NULL;
	size_t i;

	if (!cache || !cache->ttl_s)
		return;
	pthread_mutex_lock(&cache->lock);
	for (i = 0; i < CACHE_SLOTS; i++) {
		struct slot *s = &cache->slots[i];
		if (strcmp(s->c.id, c->id) == 0) {
			pick = s;
			break;
		}
		if (!pick || s->until_ms < pick->until_ms)
			pick = s;
	}
	pick->c = *c;
	pick->c.inst = NULL;
	pick->until_ms = now + cache->ttl_s * 1000u;
	pthread_mutex_unlock(&cache->lock);
}

void tb_k8s_cache_drop(struct tb_k8s_cache *cache, const char *id)
{
	size_t i;

	if (!cache)
		return;
	pthread_mutex_lock(&cache->lock);
	for (i = 0; i < CACHE_SLOTS; i++)
		if (strcmp(cache->slots[i].c.id, id) == 0)
			memset(&cache->slots[i], 0, sizeof cache->slots[i]);
	pthread_mutex_unlock(&cache->lock);
}
