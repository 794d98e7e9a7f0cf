/* The HTTP sessions: one struct tb_mcp and one core session per
 * Mcp-Session-Id, found by id, ended by DELETE, by idleness or at shutdown.
 * A session lives while it is open or an exchange uses it; its cleanup
 * (tb_session_end, slow: it destroys sandboxes) runs on a worker. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/log.h"
#include "protocol/parker.h"
#include "protocol/workers.h"
#include "tasks/session.h"
#include "transport/http_internal.h"

#define BUCKETS 256

struct http_sessions {
	pthread_mutex_t lock;
	pthread_cond_t gone;
	struct http_session *bucket[BUCKETS];
	unsigned alive; /* made and not yet cleaned up */
	unsigned open;  /* made and not yet closed (their calls done) */
	bool closing;   /* every session ends: none is published any more */
	struct tb_workers *pool;
	struct tb_parker *parker;
	bool test_tools;
};

int64_t http_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct http_sessions *http_sessions_new(struct tb_workers *pool,
                                        struct tb_parker *parker,
                                        bool test_tools)
{
	struct http_sessions *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->gone, NULL);
	t->pool = pool;
	t->parker = parker;
	t->test_tools = test_tools;
	return t;
}

void http_sessions_free(struct http_sessions *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->gone);
	free(t);
}

static unsigned bucket_of(const char *id)
{
	return (unsigned)strtoul((char[3]){id[0], id[1], 0}, NULL, 16) %
	       BUCKETS;
}

/* The cleanup of a session nobody uses any more, on a worker. */
static void cleanup(void *arg)
{
	struct http_session *s = arg;
	struct http_sessions *t = s->table;

	tb_session_end(s->core);
	tb_mcp_free(s->mcp);
	pthread_mutex_destroy(&s->feed);
	free(s);
	pthread_mutex_lock(&t->lock);
	t->alive--;
	pthread_cond_broadcast(&t->gone);
	pthread_mutex_unlock(&t->lock);
}

/* Drops one reference; the last one hands the cleanup to the pool (or
 * runs it here when the pool refuses it). */
static void unref(struct http_session *s)
{
	struct http_sessions *t = s->table;

	pthread_mutex_lock(&t->lock);
	bool last = --s->refs == 0;
	pthread_mutex_unlock(&t->lock);
	if (!last)
		return;
	if (tb_workers_submit(t->pool, cleanup, s) < 0) {
		tb_log(TB_LOG_WARN, "session cleanup runs inline: the worker "
		                    "queue is full");
		cleanup(s);
	}
}

/* tb_mcp_close's done: no call of the session is left. */
static void closed(void *arg)
{
	struct http_session *s = arg;
	struct http_sessions *t = s->table;

	pthread_mutex_lock(&t->lock);
	t->open--;
	pthread_cond_broadcast(&t->gone);
	pthread_mutex_unlock(&t->lock);
	unref(s);
}

/* Never used: every message goes through a sink. */
static void no_write(void *ctx, const char *line, size_t len, bool reply)
{
	tb_log(TB_LOG_ERROR, "HTTP session: a message without a request");
}

struct http_session *http_session_create(struct http_sessions *t,
                                         const struct tb_principal *who)
{
	unsigned char raw[HTTP_SID_BYTES];
	struct http_session *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
		tb_log(TB_LOG_ERROR, "getrandom failed: no session id");
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(s->id + 2 * i, 3, "%02x", raw[i]);
	s->who = *who;
	s->core = tb_session_new();
	struct tb_mcp_opts mo = {
	    .principal = &s->who,
	    .write = no_write,
	    .pool = t->pool,
	    .parker = t->parker,
	    .test_tools = t->test_tools,
	    .session = s->core,
	};
	s->mcp = s->core ? tb_mcp_new(&mo) : NULL;
	if (!s->mcp) {
		tb_session_end(s->core);
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->feed, NULL);
	s->table = t;
	s->refs = 2; /* open, and the caller's exchange */
	s->active = 1;
	s->last_used_ms = http_now_ms();
	pthread_mutex_lock(&t->lock);
	t->alive++;
	t->open++;
	pthread_mutex_unlock(&t->lock);
	return s;
}

struct http_session *http_session_find(struct http_sessions *t, const char *id,
                                       const struct tb_principal *who)
{
	struct http_session *s;

	if (strlen(id) != HTTP_SID_LEN)
		return NULL;
	pthread_mutex_lock(&t->lock);
	for (s = t->bucket[bucket_of(id)]; s; s = s->next)
		if (strcmp(s->id, id) == 0 &&
		    strcmp(s->who.name, who->name) == 0) {
			s->refs++;
			s->active++;
			s->last_used_ms = http_now_ms();
			break;
		}
	pthread_mutex_unlock(&t->lock);
	return s;
}

void http_session_done(struct http_session *s)
{
	pthread_mutex_lock(&s->table->lock);
	s->active--;
	s->last_used_ms = http_now_ms();
	pthread_mutex_unlock(&s->table->lock);
	unref(s);
}

bool http_session_feed(struct http_session *s, const char *msg, size_t len,
                       const struct tb_mcp_sink *sink)
{
	pthread_mutex_lock(&s->feed);
	bool live = !s->ended;
	if (live)
		tb_mcp_handle_message(s->mcp, msg, len, sink);
	pthread_mutex_unlock(&s->feed);
	return live;
}

/* Takes s out of the table, if it is there; t's lock held. Returns
 * whether it was. */
static bool unlink_locked(struct http_session *s)
{
	for (struct http_session **p = &s->table->bucket[bucket_of(s->id)]; *p;
	     p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			return true;
		}
	return false;
}

/* Closes s, taken out of the table by the caller: after this, nothing is
 * fed to it. */
static void close_session(struct http_session *s, bool published)
{
	pthread_mutex_lock(&s->feed);
	bool first = !s->ended;
	s->ended = true;
	pthread_mutex_unlock(&s->feed);
	if (!first)
		return;
	if (published)
		http_stats_sessions(-1);
	tb_log(TB_LOG_DEBUG, "session %.8s... ends", s->id);
	tb_mcp_close(s->mcp, closed, s);
}

void http_session_publish(struct http_session *s)
{
	struct http_sessions *t = s->table;
	unsigned b = bucket_of(s->id);

	pthread_mutex_lock(&t->lock);
	bool closing = t->closing;
	if (!closing) {
		s->next = t->bucket[b];
		t->bucket[b] = s;
	}
	pthread_mutex_unlock(&t->lock);
	if (closing)
		close_session(s, false);
	else
		http_stats_sessions(1);
}

void http_session_end(struct http_session *s)
{
	pthread_mutex_lock(&s->table->lock);
	bool published = unlink_locked(s);
	pthread_mutex_unlock(&s->table->lock);
	close_session(s, published);
}

void http_sessions_expire(struct http_sessions *t, int64_t idle_ms)
{
	struct http_session *doomed = NULL;
	int64_t now = http_now_ms();

	pthread_mutex_lock(&t->lock);
	if (idle_ms == 0)
		t->closing = true;
	for (unsigned b = 0; b < BUCKETS; b++)
		for (struct http_session **p = &t->bucket[b]; *p;) {
			struct http_session *s = *p;
			if (idle_ms > 0 && (s->active > 0 ||
			                    now - s->last_used_ms < idle_ms)) {
				p = &s->next;
				continue;
			}
			*p = s->next;
			s->refs++; /* ours, until it is closed */
			s->next = doomed;
			doomed = s;
		}
	pthread_mutex_unlock(&t->lock);
	while (doomed) {
		struct http_session *s = doomed;
		doomed = s->next;
		if (idle_ms > 0)
			tb_log(TB_LOG_INFO, "session %.8s... idle: ending it",
			       s->id);
		close_session(s, true);
		unref(s);
	}
}

void http_sessions_wait_closed(struct http_sessions *t)
{
	pthread_mutex_lock(&t->lock);
	while (t->open > 0)
		pthread_cond_wait(&t->gone, &t->lock);
	pthread_mutex_unlock(&t->lock);
}

void http_sessions_wait(struct http_sessions *t)
{
	pthread_mutex_lock(&t->lock);
	while (t->alive > 0)
		pthread_cond_wait(&t->gone, &t->lock);
	pthread_mutex_unlock(&t->lock);
}
