/* The budget of answer bytes not yet taken by their clients: an answer
 * counts from the moment its call asks for room (before it is built) until
 * MHD has sent its last byte or dropped it with its connection. A large
 * answer that would pass the budget is refused (the call answers a tool
 * error); one is always let in when nothing else is unsent. Memory freed by
 * a large answer goes back to the system on the watcher's next tick. */
#include "config.h"

#include <malloc.h>
#include <stdio.h>

#include "base/log.h"
#include "transport/http_internal.h"

/* Freeing an answer this large asks for a trim. */
#define TRIM_AFTER ((size_t)1 << 20)
/* Blocks this large are mapped on their own (answers, their pages). */
#define MMAP_THRESHOLD ((size_t)256 << 10)

bool http_answers_reserve(struct http_server *srv, size_t bytes, char *why,
                          size_t whylen)
{
	size_t unsent = __atomic_load_n(&srv->unsent, __ATOMIC_RELAXED);

	do {
		if (unsent > 0 && (bytes > srv->answer_budget ||
		                   unsent > srv->answer_budget - bytes)) {
			snprintf(why, whylen,
			         "answers not yet taken by their clients hold "
			         "%zu bytes, and this one (about %zu) would "
			         "pass the budget of %zu ($.http."
			         "answer_budget_mib); retry later, or ask for "
			         "less",
			         unsent, bytes, srv->answer_budget);
			http_stats_answer_refused();
			return false;
		}
	} while (!__atomic_compare_exchange_n(
	    &srv->unsent, &unsent, unsent + bytes, true, __ATOMIC_ACQ_REL,
	    __ATOMIC_RELAXED));
	http_stats_unsent((int64_t)bytes);
	return true;
}

void http_answers_count(struct http_server *srv, size_t *held, size_t now)
{
	if (now == *held)
		return;
	if (now > *held)
		__atomic_add_fetch(&srv->unsent, now - *held, __ATOMIC_ACQ_REL);
	else
		__atomic_sub_fetch(&srv->unsent, *held - now, __ATOMIC_ACQ_REL);
	http_stats_unsent((int64_t)now - (int64_t)*held);
	if (now == 0 && *held >= TRIM_AFTER)
		__atomic_store_n(&srv->trim, 1, __ATOMIC_RELEASE);
	*held = now;
}

void http_answers_trim(struct http_server *srv)
{
	if (!__atomic_exchange_n(&srv->trim, 0, __ATOMIC_ACQ_REL))
		return;
	/* glibc keeps what a thread's arena freed: a large answer's pages
	 * go back only when asked. */
	malloc_trim(0);
}

void http_answers_malloc_setup(void)
{
	/* glibc raises its mmap threshold to the largest block freed (up to
	 * 32 MiB) and its trim threshold to twice that: after one large
	 * answer, the next ones are carved from the threads' arenas, whose
	 * free tops below 64 MiB are never given back (malloc_trim trims only
	 * the main arena's top). A fixed threshold keeps large blocks mapped
	 * on their own, unmapped when freed, and arenas' tops trimmed. */
	if (mallopt(M_MMAP_THRESHOLD, (int)MMAP_THRESHOLD) != 1)
		tb_log(TB_LOG_DEBUG, "mallopt(M_MMAP_THRESHOLD) refused");
}
