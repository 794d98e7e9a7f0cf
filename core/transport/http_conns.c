/* The connections' deadlines and the cap of unauthenticated ones
 * (http_conns.h). libmicrohttpd's own timeout restarts with every byte, so
 * a client sending one byte a second would hold its connection for ever.
 *
 * A connection is shut down, never closed, here: libmicrohttpd then sees
 * the end of its socket and closes it. The table's lock is held around
 * every shutdown and libmicrohttpd tells http_conn_close, which takes the
 * lock, before it closes the socket (daemon.c, MHD_cleanup_connections),
 * so a descriptor shut down here is always still the connection's. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "base/log.h"
#include "transport/http_conns.h"
#include "transport/http_internal.h"

struct http_conn {
	int fd;
	enum http_conn_phase phase;
	int64_t since_ms; /* when the phase began */
	bool authenticated;
	bool reused; /* a request of it was answered */
	bool cut;    /* shut down */
	struct http_conn *prev, *next;
};

/* One list in order of opening (the oldest first). */
struct conn_list {
	struct http_conn *head, *tail;
	unsigned n;
};

struct http_conns {
	struct http_conn_limits limits;
	pthread_mutex_t lock;
	struct conn_list unauthenticated, authenticated;
	unsigned evicted; /* since the last sweep */
};

static void list_push(struct conn_list *l, struct http_conn *c)
{
	c->prev = l->tail;
	c->next = NULL;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
	l->n++;
}

static void list_remove(struct conn_list *l, struct http_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	l->n--;
}

static struct conn_list *list_of(struct http_conns *t, struct http_conn *c)
{
	return c->authenticated ? &t->authenticated : &t->unauthenticated;
}

/* Shuts c's socket down once; lock held. */
static void cut(struct http_conn *c)
{
	if (c->cut)
		return;
	c->cut = true;
	shutdown(c->fd, SHUT_RDWR);
}

struct http_conns *http_conns_new(const struct http_conn_limits *limits)
{
	struct http_conns *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->limits = *limits;
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

void http_conns_free(struct http_conns *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* Shuts down the oldest unauthenticated connection waiting for its
 * headers, or else newest; lock held. */
static void evict(struct http_conns *t, struct http_conn *newest)
{
	struct http_conn *c = t->unauthenticated.head;

	while (c && (c == newest || c->cut || c->phase != HTTP_CONN_HEAD))
		c = c->next;
	cut(c ? c : newest);
	t->evicted++;
}

struct http_conn *http_conn_open(struct http_conns *t, int fd)
{
	struct http_conn *c = calloc(1, sizeof *c);

	if (!c) {
		shutdown(fd, SHUT_RDWR);
		return NULL;
	}
	c->fd = fd;
	c->phase = HTTP_CONN_HEAD;
	c->since_ms = http_now_ms();
	c->authenticated = t->limits.max_unauthenticated == 0;
	pthread_mutex_lock(&t->lock);
	list_push(list_of(t, c), c);
	if (!c->authenticated &&
	    t->unauthenticated.n > t->limits.max_unauthenticated)
		evict(t, c);
	pthread_mutex_unlock(&t->lock);
	return c;
}

void http_conn_close(struct http_conns *t, struct http_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&t->lock);
	list_remove(list_of(t, c), c);
	pthread_mutex_unlock(&t->lock);
	free(c);
}

void http_conn_enter(struct http_conns *t, struct http_conn *c,
                     enum http_conn_phase phase)
{
	if (!c)
		return;
	pthread_mutex_lock(&t->lock);
	if (phase == HTTP_CONN_HEAD && c->phase != HTTP_CONN_HEAD)
		c->reused = true;
	c->phase = phase;
	c->since_ms = http_now_ms();
	pthread_mutex_unlock(&t->lock);
}

void http_conn_authenticated(struct http_conns *t, struct http_conn *c)
{
	if (!c || c->authenticated)
		return;
	pthread_mutex_lock(&t->lock);
	list_remove(&t->unauthenticated, c);
	c->authenticated = true;
	list_push(&t->authenticated, c);
	pthread_mutex_unlock(&t->lock);
}

/* When c's phase must end (INT64_MAX: never); lock held. */
static int64_t deadline(const struct http_conns *t, const struct http_conn *c)
{
	switch (c->phase) {
	case HTTP_CONN_HEAD:
		return c->since_ms + t->limits.header_ms +
		       (c->authenticated && c->reused ? t->limits.idle_ms : 0);
	case HTTP_CONN_BODY:
		return c->since_ms + t->limits.body_ms;
	default:
		return INT64_MAX;
	}
}

/* Shuts down l's connections past their deadline; lock held. */
static unsigned sweep_list(struct http_conns *t, struct conn_list *l,
                           int64_t now)
{
	unsigned n = 0;

	for (struct http_conn *c = l->head; c; c = c->next)
		if (!c->cut && now >= deadline(t, c)) {
			cut(c);
			n++;
		}
	return n;
}

unsigned http_conns_sweep(struct http_conns *t)
{
	int64_t now = http_now_ms();
	unsigned late, evicted;

	pthread_mutex_lock(&t->lock);
	late = sweep_list(t, &t->unauthenticated, now) +
	       sweep_list(t, &t->authenticated, now);
	evicted = t->evicted;
	t->evicted = 0;
	pthread_mutex_unlock(&t->lock);
	if (late || evicted)
		tb_log(TB_LOG_INFO,
		       "closed %u connection(s) past their header or body "
		       "deadline and %u unauthenticated one(s) past the cap "
		       "(max_unauthenticated)",
		       late, evicted);
	http_stats_cut(late, evicted);
	return late + evicted;
}
