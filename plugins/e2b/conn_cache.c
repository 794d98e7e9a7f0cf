/* What connect learnt about a sandbox (its envd URL, access token and envd
 * version flags, and what describe learnt: owner, creation and expiry), kept
 * per sandbox id for a few seconds so that the next connect needs no
 * control-plane request. Entries age out after the ttl counted from the
 * control-plane answer; a full table forgets the entry that would age out
 * first. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "e2b_int.h"

#define TB_CACHE_MAX 256 /* sandboxes remembered at once */

struct entry {
	char id[TASKBOX_SANDBOX_ID_MAX];
	char *envd_url;
	char *access_token; /* NULL when the sandbox has none */
	int legacy_user;
	int octet_upload;
	struct tb_e2b_info info;
	uint64_t expires_ms; /* monotonic */
};

struct tb_conn_cache {
	pthread_mutex_t lock;
	uint64_t ttl_ms;
	size_t n;
	struct entry entries[TB_CACHE_MAX];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void entry_clear(struct entry *e)
{
	free(e->envd_url);
	free(e->access_token);
	memset(e, 0, sizeof *e);
}

/* Removes entry i (the last one takes its place). Under the lock. */
static void remove_at(struct tb_conn_cache *cache, size_t i)
{
	entry_clear(&cache->entries[i]);
	if (i != cache->n - 1) {
		cache->entries[i] = cache->entries[cache->n - 1];
		memset(&cache->entries[cache->n - 1], 0,
		       sizeof cache->entries[0]);
	}
	cache->n--;
}

/* The index of id's entry, or cache->n. Under the lock. */
static size_t find(const struct tb_conn_cache *cache, const char *id)
{
	size_t i;

	for (i = 0; i < cache->n; i++)
		if (strcmp(cache->entries[i].id, id) == 0)
			break;
	return i;
}

struct tb_conn_cache *tb_conn_cache_new(uint32_t ttl_s)
{
	struct tb_conn_cache *cache = calloc(1, sizeof *cache);

	if (cache && pthread_mutex_init(&cache->lock, NULL) != 0) {
		free(cache);
		return NULL;
	}
	if (cache)
		cache->ttl_ms = (uint64_t)ttl_s * 1000u;
	return cache;
}

void tb_conn_cache_free(struct tb_conn_cache *cache)
{
	size_t i;

	if (!cache)
		return;
	for (i = 0; i < cache->n; i++)
		entry_clear(&cache->entries[i]);
	pthread_mutex_destroy(&cache->lock);
	free(cache);
}

int tb_conn_cache_get(struct tb_conn_cache *cache, const char *id,
                      struct tb_e2b_conn *conn)
{
	const struct entry *e;
	int found = 0;
	size_t i;

	if (!cache || !id)
		return 0;
	pthread_mutex_lock(&cache->lock);
	i = find(cache, id);
	if (i < cache->n && cache->entries[i].expires_ms <= now_ms())
		remove_at(cache, i);
	else if (i < cache->n) {
		e = &cache->entries[i];
		conn->envd_url = strdup(e->envd_url);
		conn->access_token =
		    e->access_token ? strdup(e->access_token) : NULL;
		conn->legacy_user = e->legacy_user;
		conn->octet_upload = e->octet_upload;
		conn->info = e->info;
		found =
		    conn->envd_url && (!e->access_token || conn->access_token)
		        ? 1
		        : -1;
	}
	pthread_mutex_unlock(&cache->lock);
	if (found == 1)
		memcpy(conn->id, id, strlen(id) + 1);
	if (found == -1) {
		free(conn->envd_url);
		free(conn->access_token);
		conn->envd_url = conn->access_token = NULL;
	}
	return found;
}

void tb_conn_cache_put(struct tb_conn_cache *cache,
                       const struct tb_e2b_conn *conn)
{
	struct entry fresh;
	uint64_t now = now_ms();
	size_t i, victim;

	if (!cache || cache->ttl_ms == 0 || !conn->envd_url)
		return;
	memset(&fresh, 0, sizeof fresh);
	memcpy(fresh.id, conn->id, sizeof fresh.id);
	fresh.envd_url = strdup(conn->envd_url);
	fresh.access_token =
	    conn->access_token ? strdup(conn->access_token) : NULL;
	fresh.legacy_user = conn->legacy_user;
	fresh.octet_upload = conn->octet_upload;
	fresh.info = conn->info;
	fresh.expires_ms = now + cache->ttl_ms;
	if (!fresh.envd_url || (conn->access_token && !fresh.access_token)) {
		entry_clear(&fresh);
		return;
	}
	pthread_mutex_lock(&cache->lock);
	i = find(cache, conn->id);
	if (i < cache->n) {
		remove_at(cache, i);
	} else if (cache->n == TB_CACHE_MAX) {
		victim = 0;
		for (i = 1; i < cache->n; i++)
			if (cache->entries[i].expires_ms <
			    cache->entries[victim].expires_ms)
				victim = i;
		remove_at(cache, victim);
	}
	cache->entries[cache->n++] = fresh;
	pthread_mutex_unlock(&cache->lock);
}

void tb_conn_cache_drop(struct tb_conn_cache *cache, const char *id)
{
	size_t i;

	if (!cache || !id)
		return;
	pthread_mutex_lock(&cache->lock);
	i = find(cache, id);
	if (i < cache->n)
		remove_at(cache, i);
	pthread_mutex_unlock(&cache->lock);
}

void tb_conn_cache_set_info(struct tb_conn_cache *cache, const char *id,
                            const struct tb_e2b_info *info)
{
	size_t i;

	if (!cache || !id)
		return;
	pthread_mutex_lock(&cache->lock);
	i = find(cache, id);
	if (i < cache->n)
		cache->entries[i].info = *info;
	pthread_mutex_unlock(&cache->lock);
}
