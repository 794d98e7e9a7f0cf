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

#include <linux/tcp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "base/log.h"
#include "transport/http_conns.h"
#include "transport/http_internal.h"

struct http_conn {
	int fd;
	enum http_conn_phase phase;
	int64_t since_ms; /* when the phase began */
	bool authenticated;
	bool reused;       /* a request of it was answered */
	bool cut;          /* shut down */
	bool over_budget;  /* opened past the descriptor budget */
	uint64_t received; /* bytes received on fd when the phase began */
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
	unsigned evicted; /* by http_conn_open since the last sweep */
};

/* How long a connection may wait for its headers before it counts against
 * the cap of unauthenticated ones: a client sends its headers at once, and
 * a burst of new connections from clients that have tokens is not cut. */
#define LINGER_MS 1000

/* The sweep's period at most (the watcher's tick). */
#define TICK_MS 1000

/* How recent a client's last byte must be for it to count as still
 * sending: past one tick, so that a client trickling a byte per tick is
 * caught whatever the phase between its bytes and the ticks (at exactly
 * one tick, a trickle a little slower than the ticks could stay just out
 * of the window tick after tick). */
#define SENDING_MS (TICK_MS + TICK_MS / 2)

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

/* Bytes received on socket fd so far (UINT64_MAX when unknown), and
 * the milliseconds since the last came (0 when unknown). */
static uint64_t tcp_received(int fd, unsigned *quiet_ms)
{
	struct tcp_info info = {0};
	socklen_t len = sizeof info;

	*quiet_ms = 0;
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0 ||
	    len < offsetof(struct tcp_info, tcpi_bytes_received) +
	              sizeof info.tcpi_bytes_received)
		return UINT64_MAX;
	*quiet_ms = info.tcpi_last_data_recv;
	return info.tcpi_bytes_received;
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

/* Whether the server has read every byte c's client sent: its wait is
 * the client's, not the server's (a server busy with a burst of requests
 * reads them late); lock held. */
static bool all_read(const struct http_conn *c)
{
	int unread = 0;

	return ioctl(c->fd, FIONREAD, &unread) < 0 || unread == 0;
}

/* Whether c's client has sent a byte since its phase began: a connection
 * silent since it opened or since its last answer is left to the idle
 * timeout (a client opening many connections under load may write on
 * some late, and a kept-alive one waits between requests); lock held. */
static bool begun(const struct http_conn *c)
{
	unsigned quiet_ms;

	return tcp_received(c->fd, &quiet_ms) > c->received;
}

/* Whether c's client is still sending, a byte having come within the last
 * SENDING_MS: a client that sent its whole request and waits is waiting
 * for the server (a server slow to parse a burst of requests), not
 * trickling; a trickling one is caught at the first tick past its deadline
 * when it sends at least a byte a tick and a half; lock held. */
static bool still_sending(const struct http_conn *c)
{
	unsigned quiet_ms;

	return tcp_received(c->fd, &quiet_ms) > c->received &&
	       quiet_ms < SENDING_MS;
}

/* Whether c has waited for its headers long enough to count against the
 * cap; lock held. */
static bool lingers(const struct http_conn *c, int64_t now)
{
	return !c->cut && c->phase == HTTP_CONN_HEAD &&
	       now - c->since_ms >= LINGER_MS && all_read(c) && begun(c);
}

/* Past the cap, shuts down the oldest unauthenticated connection that
 * lingers, if any: a new one takes its place at once; lock held. */
static void evict_one(struct http_conns *t, int64_t now)
{
	for (struct http_conn *c = t->unauthenticated.head; c; c = c->next)
		if (lingers(c, now)) {
			cut(c);
			t->evicted++;
			return;
		}
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
	c->received = 0;
	c->since_ms = http_now_ms();
	c->authenticated = t->limits.max_unauthenticated == 0;
	pthread_mutex_lock(&t->lock);
	list_push(list_of(t, c), c);
	if (!c->authenticated &&
	    t->unauthenticated.n > t->limits.max_unauthenticated)
		evict_one(t, c->since_ms);
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
	if (phase == HTTP_CONN_HEAD && c->phase != HTTP_CONN_HEAD) {
		c->reused = true;
		unsigned quiet_ms;
		c->received = tcp_received(c->fd, &quiet_ms);
		if (c->received == UINT64_MAX)
			c->received = 0;
	}
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
		if (!c->cut && now >= deadline(t, c) && all_read(c) &&
		    still_sending(c)) {
			cut(c);
			n++;
		}
	return n;
}

/* Shuts down the oldest unauthenticated connections that linger, past
 * the cap; lock held. */
static unsigned sweep_over_cap(struct http_conns *t, int64_t now)
{
	unsigned max = t->limits.max_unauthenticated, lingering = 0, n = 0;

	if (max == 0)
		return 0;
	for (struct http_conn *c = t->unauthenticated.head; c; c = c->next)
		lingering += lingers(c, now);
	for (struct http_conn *c = t->unauthenticated.head;
	     c && lingering > max; c = c->next)
		if (lingers(c, now)) {
			cut(c);
			lingering--;
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
	evicted = t->evicted + sweep_over_cap(t, now);
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

void http_conn_set_over_budget(struct http_conn *c)
{
	if (c)
		c->over_budget = true;
}

bool http_conn_is_over_budget(const struct http_conn *c)
{
	return c && c->over_budget;
}
