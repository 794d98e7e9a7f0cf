/* The watcher of suspended sockets: libmicrohttpd does not poll a
 * suspended connection, so a client that hangs up while its call runs is
 * seen here (EPOLLRDHUP) and its call cancelled at once. The same thread
 * ticks the idle sessions' expiry. An item removed may still be in the
 * batch of events being handled: it is released only after that batch. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/log.h"
#include "transport/http_internal.h"

#define BATCH 64

struct http_watch {
	int ep;
	int wake; /* eventfd: stop */
	pthread_t thread;
	void (*gone)(void *item);
	void (*release)(void *item);
	void (*tick)(void *ctx);
	void *tick_ctx;
	unsigned tick_ms;
	int stop; /* atomic */
	pthread_mutex_t lock;
	void **removed; /* to release after the current batch */
	size_t n_removed, cap_removed;
};

/* Releases the items removed so far. */
static void release_removed(struct http_watch *w)
{
	void **items;
	size_t n;

	pthread_mutex_lock(&w->lock);
	items = w->removed;
	n = w->n_removed;
	w->removed = NULL;
	w->n_removed = w->cap_removed = 0;
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < n; i++)
		w->release(items[i]);
	free(items);
}

static void *run(void *arg)
{
	struct http_watch *w = arg;
	struct epoll_event ev[BATCH];
	int64_t next_tick = http_now_ms() + w->tick_ms;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		int64_t wait = next_tick - http_now_ms();
		int n = epoll_wait(w->ep, ev, BATCH, wait > 0 ? (int)wait : 0);
		if (n < 0 && errno != EINTR) {
			tb_log(TB_LOG_ERROR, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++)
			if (ev[i].data.ptr)
				w->gone(ev[i].data.ptr);
		release_removed(w);
		if (http_now_ms() >= next_tick) {
			w->tick(w->tick_ctx);
			next_tick = http_now_ms() + w->tick_ms;
		}
	}
	return NULL;
}

struct http_watch *http_watch_start(void (*gone)(void *item),
                                    void (*release)(void *item),
                                    void (*tick)(void *ctx), void *tick_ctx,
                                    unsigned tick_ms)
{
	struct http_watch *w = calloc(1, sizeof *w);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

	if (!w)
		return NULL;
	w->gone = gone;
	w->release = release;
	w->tick = tick;
	w->tick_ctx = tick_ctx;
	w->tick_ms = tick_ms ? tick_ms : 1000;
	pthread_mutex_init(&w->lock, NULL);
	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->ep < 0 || w->wake < 0 ||
	    epoll_ctl(w->ep, EPOLL_CTL_ADD, w->wake, &ev) < 0 ||
	    pthread_create(&w->thread, NULL, run, w) != 0) {
		tb_log(TB_LOG_ERROR, "the socket watcher: %s", strerror(errno));
		if (w->ep >= 0)
			close(w->ep);
		if (w->wake >= 0)
			close(w->wake);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL;
	}
	return w;
}

int http_watch_add(struct http_watch *w, int fd, void *item)
{
	struct epoll_event ev = {.events = EPOLLRDHUP, .data.ptr = item};

	return epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev);
}

void http_watch_remove(struct http_watch *w, int fd, void *item)
{
	epoll_ctl(w->ep, EPOLL_CTL_DEL, fd, NULL);
	pthread_mutex_lock(&w->lock);
	if (w->n_removed == w->cap_removed) {
		size_t cap = w->cap_removed ? 2 * w->cap_removed : 64;
		void **grown = realloc(w->removed, cap * sizeof *grown);
		if (!grown) {
			/* leak the reference rather than free it too early */
			pthread_mutex_unlock(&w->lock);
			tb_log(TB_LOG_ERROR, "out of memory in the watcher");
			return;
		}
		w->removed = grown;
		w->cap_removed = cap;
	}
	w->removed[w->n_removed++] = item;
	pthread_mutex_unlock(&w->lock);
}

void http_watch_stop(struct http_watch *w)
{
	uint64_t one = 1;

	if (!w)
		return;
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	if (write(w->wake, &one, sizeof one) < 0)
		tb_log(TB_LOG_WARN, "waking the watcher: %s", strerror(errno));
	pthread_join(w->thread, NULL);
	release_removed(w);
	close(w->ep);
	close(w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
