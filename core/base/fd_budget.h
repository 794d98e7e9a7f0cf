/* The process's descriptor budget. Every parked wait holds one descriptor
 * (what wakes it) and, over HTTP, its connection's socket; the rest of the
 * process needs a share of its own: its fixed descriptors, the caches
 * sized from the open-file limit (kept files, supervisors' pidfds, idle
 * connections) and what each running call opens for a moment (an exec's
 * pipes, the files it reads). Derived once at start-up from the soft
 * RLIMIT_NOFILE; a wait past its share is refused rather than left to fail
 * with "Too many open files" (its own or another call's). Thread-safe
 * after tb_fd_budget_init. */
#ifndef TB_FD_BUDGET_H
#define TB_FD_BUDGET_H

#include <stdbool.h>

struct tb_fd_budget {
	unsigned long limit;  /* the soft RLIMIT_NOFILE (0: none) */
	unsigned reserve;     /* kept for the rest of the process */
	unsigned workers;     /* calls that may run at once */
	unsigned connections; /* HTTP: connections served at once; 0 on stdio */
	unsigned refusing;    /* HTTP: more only answered 503 and closed */
	unsigned waits;       /* parked waits at once */
};

/* Derives the budget from the current soft limit for a server of workers
 * threads and, over HTTP, at most max_connections connections (0 on
 * stdio). workers and connections come out at most what was asked, less
 * when the limit is short; waits, over HTTP, may hold half of the
 * connections (the others stay for calls that do not wait). Logs one line
 * with the figures when the limit cuts anything. */
void tb_fd_budget_init(unsigned workers, unsigned max_connections);

/* A default number of workers for the current soft limit: an eighth of
 * what the limit leaves for calls and waits, between lo and hi (hi when
 * there is no limit), so that the default takes no more than its share
 * from the parked waits. */
unsigned tb_fd_budget_default_workers(unsigned lo, unsigned hi);

/* The budget derived last (before any init: no limit on waits). */
const struct tb_fd_budget *tb_fd_budget_get(void);

/* Takes a parked wait's share: false when the budget's waits are all
 * parked. Give it back with tb_fd_budget_wait_put. */
bool tb_fd_budget_wait_take(void);
void tb_fd_budget_wait_put(void);

/* The words a refused wait is answered with, into buf. */
const char *tb_fd_budget_refusal(char *buf, unsigned long len);

#endif /* TB_FD_BUDGET_H */
