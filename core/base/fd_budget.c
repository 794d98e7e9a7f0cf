/* tb_fd_budget (fd_budget.h): the shares of the open-file limit. */
#include "config.h"

#include <stdio.h>
#include <sys/resource.h>

#include "base/fd_budget.h"
#include "base/log.h"

/* The process's own descriptors: standard streams, the log, the listener,
 * the epoll sets, eventfds and threads of the parker, the socket watcher
 * and the directory watch, the provider instances' directories, and the
 * idle connections of the local provider (two directories each). */
#define FIXED_MIN 24u
/* What one running call may hold open at once besides its connection:
 * a box, an exec's pipes and /dev/null, a file or two it reads. */
#define PER_CALL 8u
/* The caches sized from the limit: a quarter for kept files (at most
 * 256), an eighth for supervisors' pidfds (at most 128), and as many
 * again for the copies the watched task directories hold. */
#define KEPT_MAX 256u
#define PIDS_MAX 128u
/* Below this, the limit is too short for the figures: keep a floor. */
#define MIN_WORKERS 2u
#define MIN_CONNECTIONS 4u
#define MIN_REFUSING 2u
#define MIN_WAITS 1u

static struct tb_fd_budget budget = {.waits = ~0u};
static unsigned parked; /* atomic */

static unsigned umin(unsigned long a, unsigned long b)
{
	return (unsigned)(a < b ? a : b);
}

/* The soft limit into *limit, false when there is none to share. */
static bool soft_limit(unsigned long *limit)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1ul << 30))
		return false;
	*limit = (unsigned long)rl.rlim_cur;
	return true;
}

/* What LIMIT leaves for calls, connections and waits past the process's
 * own descriptors and its caches. */
static unsigned long left_of(unsigned long limit)
{
	unsigned long fixed = FIXED_MIN + limit / 64;
	unsigned long caches =
	    umin(limit / 4, KEPT_MAX) + 2 * umin(limit / 8, PIDS_MAX);

	return limit > fixed + caches ? limit - fixed - caches : 0;
}

unsigned tb_fd_budget_default_workers(unsigned lo, unsigned hi)
{
	unsigned long limit;
	unsigned n;

	if (!soft_limit(&limit))
		return hi;
	n = umin(left_of(limit) / 8 / PER_CALL, hi);
	return n > lo ? n : lo;
}

void tb_fd_budget_init(unsigned workers, unsigned max_connections)
{
	unsigned long limit, left;
	struct tb_fd_budget b = {0};

	if (!soft_limit(&limit)) {
		b.workers = workers;
		b.connections = max_connections;
		b.waits = ~0u;
		budget = b;
		return;
	}
	left = left_of(limit);
	/* Calls that run at once: at most half of what is left. */
	b.workers = umin(workers, left / 2 / PER_CALL);
	if (b.workers < MIN_WORKERS)
		b.workers = workers < MIN_WORKERS ? workers : MIN_WORKERS;
	left = left > b.workers * PER_CALL ? left - b.workers * PER_CALL : 0;
	if (max_connections) {
		/* A connection, a wait on half of them, and an eighth more
		 * answered 503: one descriptor each. */
		b.connections = umin(max_connections, left * 8 / 13);
		if (b.connections < MIN_CONNECTIONS)
			b.connections = MIN_CONNECTIONS;
		b.refusing = b.connections / 8 > MIN_REFUSING
		                 ? b.connections / 8
		                 : MIN_REFUSING;
		b.waits = b.connections / 2;
	} else {
		b.waits = umin(left, ~0u);
	}
	if (b.waits < MIN_WAITS)
		b.waits = MIN_WAITS;
	b.limit = limit;
	b.reserve =
	    (unsigned)(limit - umin(limit, (unsigned long)b.waits +
	                                       b.connections + b.refusing));
	budget = b;
	if (b.workers < workers || b.connections < max_connections ||
	    !max_connections) {
		char conns[48] = "";

		if (max_connections)
			snprintf(conns, sizeof conns, ", %u connections",
			         b.connections);
		tb_log(b.workers < workers || b.connections < max_connections
		           ? TB_LOG_WARN
		           : TB_LOG_INFO,
		       "open-file limit %lu: %u workers%s, %u parked waits at "
		       "once (raise the limit with ulimit -n or LimitNOFILE= "
		       "for more)",
		       limit, b.workers, conns, b.waits);
	}
}

const struct tb_fd_budget *tb_fd_budget_get(void)
{
	return &budget;
}

bool tb_fd_budget_wait_take(void)
{
	unsigned n = __atomic_add_fetch(&parked, 1, __ATOMIC_ACQ_REL);

	if (n <= budget.waits)
		return true;
	__atomic_sub_fetch(&parked, 1, __ATOMIC_ACQ_REL);
	return false;
}

void tb_fd_budget_wait_put(void)
{
	__atomic_sub_fetch(&parked, 1, __ATOMIC_ACQ_REL);
}

const char *tb_fd_budget_refusal(char *buf, unsigned long len)
{
	snprintf(buf, len,
	         "server busy: %u waits are parked, as many as its open-file "
	         "limit (%lu) allows; retry later, or without wait",
	         budget.waits, budget.limit);
	return buf;
}
