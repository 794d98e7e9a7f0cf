/* The protocol state of stateless (MCP 2026-07-28) requests: one core
 * protocol object per request, belonging to no session, freed once its
 * exchange is gone and its calls have ended. The table knows the live
 * ones, so that a stopping server cancels their calls and waits for them. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/log.h"
#include "transport/http_internal.h"

struct http_stateless {
	struct http_stateless_table *table;
	struct tb_mcp *mcp;
	unsigned refs; /* under the table's lock: the exchange's, and the
	                  close's until the last call ends */
	bool closed;   /* tb_mcp_close was called */
	struct http_stateless *prev, *next;
	struct http_stateless *closing; /* http_stateless_shutdown's list */
};

struct http_stateless_table {
	pthread_mutex_t lock;
	pthread_cond_t gone; /* an entry was freed, or its calls ended */
	struct http_stateless *live;
	unsigned pending; /* entries whose calls have not all ended */
	struct tb_workers *pool;
	struct tb_parker *parker;
	bool test_tools;
	bool stopping; /* set by http_stateless_shutdown */
};

/* Never called: every message goes to the sink given with it. */
static void no_write(void *ctx, const char *line, size_t len, bool reply)
{
	(void)ctx, (void)line, (void)len, (void)reply;
}

struct http_stateless_table *http_stateless_new(struct tb_workers *pool,
                                                struct tb_parker *parker,
                                                bool test_tools)
{
	struct http_stateless_table *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->gone, NULL);
	t->pool = pool;
	t->parker = parker;
	t->test_tools = test_tools;
	return t;
}

struct http_stateless *http_stateless_open(struct http_stateless_table *t,
                                           const struct tb_principal *who)
{
	struct http_stateless *e = calloc(1, sizeof *e);
	struct tb_mcp_opts mo = {
	    .principal = who,
	    .write = no_write,
	    .pool = t->pool,
	    .parker = t->parker,
	    .test_tools = t->test_tools,
	};

	if (!e || !(e->mcp = tb_mcp_new(&mo))) {
		free(e);
		return NULL;
	}
	e->table = t;
	e->refs = 2;
	pthread_mutex_lock(&t->lock);
	t->pending++;
	e->next = t->live;
	if (t->live)
		t->live->prev = e;
	t->live = e;
	pthread_mutex_unlock(&t->lock);
	return e;
}

struct tb_mcp *http_stateless_mcp(const struct http_stateless *e)
{
	return e->mcp;
}

/* Drops a reference; the last frees e. */
static void put(struct http_stateless *e)
{
	struct http_stateless_table *t = e->table;

	pthread_mutex_lock(&t->lock);
	bool last = --e->refs == 0;
	if (last) {
		if (e->prev)
			e->prev->next = e->next;
		else
			t->live = e->next;
		if (e->next)
			e->next->prev = e->prev;
		pthread_cond_broadcast(&t->gone);
	}
	pthread_mutex_unlock(&t->lock);
	if (!last)
		return;
	tb_mcp_free(e->mcp);
	free(e);
}

static void closed(void *ctx)
{
	struct http_stateless *e = ctx;

	pthread_mutex_lock(&e->table->lock);
	e->table->pending--;
	pthread_cond_broadcast(&e->table->gone);
	pthread_mutex_unlock(&e->table->lock);
	put(e);
}

void http_stateless_close(struct http_stateless *e)
{
	pthread_mutex_lock(&e->table->lock);
	bool first = !e->closed;
	e->closed = true;
	pthread_mutex_unlock(&e->table->lock);
	if (first)
		tb_mcp_close(e->mcp, closed, e);
}

void http_stateless_release(struct http_stateless *e)
{
	/* An exchange that never completed still closes its calls. */
	http_stateless_close(e);
	put(e);
}

void http_stateless_shutdown(struct http_stateless_table *t)
{
	struct http_stateless *list = NULL;

	pthread_mutex_lock(&t->lock);
	t->stopping = true;
	for (struct http_stateless *e = t->live; e; e = e->next) {
		e->refs++;
		e->closing = list;
		list = e;
	}
	pthread_mutex_unlock(&t->lock);
	while (list) {
		struct http_stateless *e = list;
		list = e->closing;
		http_stateless_close(e);
		put(e);
	}
	pthread_mutex_lock(&t->lock);
	while (t->pending)
		pthread_cond_wait(&t->gone, &t->lock);
	pthread_mutex_unlock(&t->lock);
}

void http_stateless_wait(struct http_stateless_table *t)
{
	pthread_mutex_lock(&t->lock);
	while (t->live)
		pthread_cond_wait(&t->gone, &t->lock);
	pthread_mutex_unlock(&t->lock);
}

void http_stateless_free(struct http_stateless_table *t)
{
	if (!t)
		return;
	if (t->live)
		tb_log(TB_LOG_ERROR, "stateless requests still live at exit");
	pthread_cond_destroy(&t->gone);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
