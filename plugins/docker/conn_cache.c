/* docker provider: connect's cache. A connect checks the sandbox with the
 * engine (inspect: exists, ours, running, its owner label and creation
 * time; the state file: home, ids, deadline). What it learnt is kept per
 * instance for connection_reuse seconds, so a tool call on a sandbox
 * checked recently connects with no request at all. An op on such a
 * connection that finds the sandbox gone or stopped connects again through
 * the engine once (tb_dk_recheck), so what it reports comes from the
 * engine, never from the cache. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker.h"

/* Entries kept at most; the oldest check goes first. */
#define CACHE_MAX 256

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void known_free(struct tb_dk_known *e)
{
	free(e->home);
	free(e);
}

void tb_dk_cache_init(struct tb_dk_cache *k)
{
	pthread_mutex_init(&k->lock, NULL);
	k->head = NULL;
	k->count = 0;
}

void tb_dk_cache_free(struct tb_dk_cache *k)
{
	struct tb_dk_known *e, *next;

	for (e = k->head; e; e = next) {
		next = e->next;
		known_free(e);
	}
	k->head = NULL;
	k->count = 0;
	pthread_mutex_destroy(&k->lock);
}

/* Unlinks and frees id's entry; the lock is held. */
static void drop_locked(struct tb_dk_cache *k, const char *id)
{
	for (struct tb_dk_known **p = &k->head; *p; p = &(*p)->next) {
		if (!strcmp((*p)->id, id)) {
			struct tb_dk_known *e = *p;
			*p = e->next;
			known_free(e);
			k->count--;
			return;
		}
	}
}

/* Frees entries older than the reuse window, and the oldest one when the
 * cache is full; the lock is held. */
static void prune_locked(struct tb_dk *dk, uint64_t now)
{
	struct tb_dk_cache *k = &dk->known;
	struct tb_dk_known **p = &k->head, **oldest = NULL;

	while (*p) {
		struct tb_dk_known *e = *p;
		if (now - e->checked_ms >= (uint64_t)dk->reuse_s * 1000) {
			*p = e->next;
			known_free(e);
			k->count--;
			continue;
		}
		if (!oldest || e->checked_ms < (*oldest)->checked_ms)
			oldest = p;
		p = &e->next;
	}
	if (k->count >= CACHE_MAX && oldest) {
		struct tb_dk_known *e = *oldest;
		*oldest = e->next;
		known_free(e);
		k->count--;
	}
}

int tb_dk_cache_get(struct tb_dk *dk, const char *id, struct tb_dk_conn *c)
{
	struct tb_dk_cache *k = &dk->known;
	int found = 0;

	if (!dk->reuse_s)
		return 0;
	pthread_mutex_lock(&k->lock);
	prune_locked(dk, now_ms());
	for (struct tb_dk_known *e = k->head; e; e = e->next) {
		if (strcmp(e->id, id))
			continue;
		/* An expired sandbox goes through connect, which removes it. */
		if (e->deadline > (int64_t)time(NULL) &&
		    (c->home = strdup(e->home))) {
			c->uid = e->uid;
			c->gid = e->gid;
			c->deadline = e->deadline;
			c->created = e->created;
			memcpy(c->owner, e->owner, sizeof(c->owner));
			found = 1;
		}
		break;
	}
	pthread_mutex_unlock(&k->lock);
	return found;
}

void tb_dk_cache_put(struct tb_dk *dk, const struct tb_dk_conn *c)
{
	struct tb_dk_cache *k = &dk->known;
	struct tb_dk_known *e;

	if (!dk->reuse_s)
		return;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->home = strdup(c->home))) {
		free(e);
		return; /* the cache is an optimisation: do without */
	}
	memcpy(e->id, c->id, sizeof(e->id));
	e->uid = c->uid;
	e->gid = c->gid;
	e->deadline = c->deadline;
	e->created = c->created;
	memcpy(e->owner, c->owner, sizeof(e->owner));
	e->checked_ms = now_ms();
	pthread_mutex_lock(&k->lock);
	drop_locked(k, c->id);
	prune_locked(dk, e->checked_ms);
	e->next = k->head;
	k->head = e;
	k->count++;
	pthread_mutex_unlock(&k->lock);
}

void tb_dk_cache_renewed(struct tb_dk *dk, const char *id, int64_t deadline)
{
	struct tb_dk_cache *k = &dk->known;

	pthread_mutex_lock(&k->lock);
	for (struct tb_dk_known *e = k->head; e; e = e->next)
		if (!strcmp(e->id, id))
			e->deadline = deadline;
	pthread_mutex_unlock(&k->lock);
}

void tb_dk_cache_drop(struct tb_dk *dk, const char *id)
{
	pthread_mutex_lock(&dk->known.lock);
	drop_locked(&dk->known, id);
	pthread_mutex_unlock(&dk->known.lock);
}

int tb_dk_recheck(struct tb_dk_conn *c, int *code, char *errbuf, size_t errlen)
{
	struct tb_dk_conn fresh;
	char why[TASKBOX_ERRBUF_SIZE];
	int rc;

	if (!c->from_cache || *code != TASKBOX_E_GONE)
		return 0;
	c->from_cache = 0;
	tb_dk_cache_drop(c->dk, c->id);
	memset(&fresh, 0, sizeof(fresh));
	rc = tb_dk_connect_checked(c->dk, c->id, &fresh, why, sizeof(why));
	if (rc != TASKBOX_OK) {
		/* The connection was made, so the sandbox existed: one that
		 * no longer does is GONE, not a missing file. */
		*code = rc == TASKBOX_E_NOT_FOUND ? TASKBOX_E_GONE : rc;
		tb_dk_fail(*code, errbuf, errlen, "sandbox %.12s: %s", c->id,
		           why);
		return 0;
	}
	free(c->home);
	c->home = fresh.home;
	c->uid = fresh.uid;
	c->gid = fresh.gid;
	c->deadline = fresh.deadline;
	c->created = fresh.created;
	memcpy(c->owner, fresh.owner, sizeof(c->owner));
	return 1;
}
