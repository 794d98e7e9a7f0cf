/* Idle connections: close keeps a connection's descriptors and what it
 * read of meta.json, and the next connect to the same sandbox takes them
 * back after one fstatat instead of opening and parsing again. A sandbox
 * destroyed, expired or renewed since makes its idle connection stale,
 * and connect then starts afresh. */
#include "config.h"

#include <string.h>
#include <time.h>

#include "local_int.h"

void tb_local_idle_init(struct tb_local_idle *idle)
{
	pthread_mutex_init(&idle->lock, NULL);
	idle->n = 0;
}

/* Removes entry i (the lock held); returns it. */
static struct tb_local_conn *take_at(struct tb_local_idle *idle, unsigned i)
{
	struct tb_local_conn *c = idle->conns[i];

	memmove(&idle->conns[i], &idle->conns[i + 1],
	        (idle->n - i - 1) * sizeof(idle->conns[0]));
	idle->n--;
	return c;
}

/* True when c's sandbox still has the meta.json c read, and its deadline
 * is ahead. */
static int still_current(const struct tb_local_conn *c)
{
	int err;

	return tb_local_meta_unchanged(c, &err) && time(NULL) < c->deadline;
}

struct tb_local_conn *tb_local_idle_take(struct tb_local *L, const char *id)
{
	struct tb_local_idle *idle = &L->idle;
	struct tb_local_conn *c = NULL;

	pthread_mutex_lock(&idle->lock);
	for (unsigned i = idle->n; i-- > 0;)
		if (!strcmp(idle->conns[i]->id, id)) {
			c = take_at(idle, i);
			break;
		}
	pthread_mutex_unlock(&idle->lock);
	if (c && !still_current(c)) {
		tb_local_conn_free(c);
		c = NULL;
	}
	return c;
}

void tb_local_idle_put(struct tb_local_conn *c)
{
	struct tb_local_idle *idle = &c->inst->idle;
	struct tb_local_conn *oldest = NULL;

	pthread_mutex_lock(&idle->lock);
	if (idle->n == TB_LOCAL_IDLE_MAX)
		oldest = take_at(idle, 0);
	idle->conns[idle->n++] = c;
	pthread_mutex_unlock(&idle->lock);
	tb_local_conn_free(oldest);
}

void tb_local_idle_drop(struct tb_local *L, const char *id)
{
	struct tb_local_idle *idle = &L->idle;
	struct tb_local_conn *gone[TB_LOCAL_IDLE_MAX];
	unsigned n = 0;

	pthread_mutex_lock(&idle->lock);
	for (unsigned i = idle->n; i-- > 0;)
		if (!id || !strcmp(idle->conns[i]->id, id))
			gone[n++] = take_at(idle, i);
	pthread_mutex_unlock(&idle->lock);
	while (n > 0)
		tb_local_conn_free(gone[--n]);
}
