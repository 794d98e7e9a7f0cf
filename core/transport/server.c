/* tb_serve (server.h): the stdio loop. Reading is the worker pool's lead:
 * the thread holding it reads lines and answers cheap methods; a tools/call
 * runs on the thread that read it, which reads on after a quick call, and
 * another thread takes over the reading from a call that lasts (workers.h).
 * EOF, SIGTERM and SIGINT end it in order: calls see themselves cancelled,
 * finish, then the shutdown hooks run. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "protocol/jsonrpc.h"
#include "base/fd_budget.h"
#include "base/log.h"
#include "protocol/mcp.h"
#include "protocol/parker.h"
#include "transport/server.h"
#include "transport/stop.h"
#include "protocol/workers.h"
#include "tasks/session.h"

/* The default workers: 8, and up to 32 as the open-file limit allows. A
 * worker waits out a provider's round trip (a wait's first look and its
 * last are one each): 1,000 waits on a remote sandbox provider at +50 ms
 * timed out with 8 and were answered with 32 (bench/results/README.md).
 * Threads are made as calls need them. */
#define DEFAULT_WORKERS_MIN 8
#define DEFAULT_WORKERS_MAX 32
#define MAX_WORKERS 256
#define QUEUE_PER_WORKER 32
/* The memory the calls in flight may cost before the reading waits. */
#define MAX_IN_FLIGHT_COST ((size_t)64 << 20)
struct out {
	int fd;
	bool broken;
};

/* Writes one message and its newline; gives up quietly once the reader of
 * out_fd has gone (nothing is left to tell). */
static void write_line(void *ctx, const char *line, size_t len, bool reply)
{
	struct out *o = ctx;
	struct iovec iov[2] = {{(void *)line, len}, {(void *)"\n", 1}};
	int cnt = 2;

	(void)reply;

	while (!o->broken && cnt > 0) {
		ssize_t n = writev(o->fd, iov, cnt);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tb_log(TB_LOG_WARN, "stdout: %s; dropping output",
			       strerror(errno));
			o->broken = true;
			return;
		}
		while (cnt > 0 && (size_t)n >= iov[0].iov_len) {
			n -= (ssize_t)iov[0].iov_len;
			iov[0] = iov[1];
			cnt--;
		}
		if (cnt > 0) {
			iov[0].iov_base = (char *)iov[0].iov_base + n;
			iov[0].iov_len -= (size_t)n;
		}
	}
}

/* The reading, which moves from thread to thread with the pool's lead. */
struct reader {
	int in_fd;
	struct tb_mcp *session;
	struct tb_lines lines;
};

/* Hands complete lines to the session until none is left (false) or this
 * thread has kept a call to run (true). */
static bool drain_lines(struct reader *r)
{
	const char *line;
	size_t len;
	enum tb_line_status st;

	while ((st = tb_lines_next(&r->lines, &line, &len)) != TB_LINE_NONE) {
		if (st == TB_LINE_OK)
			tb_mcp_handle_line(r->session, line, len);
		else
			tb_mcp_line_too_long(r->session, r->lines.max);
		if (tb_workers_yielding())
			return true;
	}
	return false;
}

/* Ends a wait for admission once SIGTERM or SIGINT came. */
static bool interrupted(void *ctx)
{
	(void)ctx;
	return tb_stop_signal() != 0;
}

/* The pool's lead: reads until EOF, a read error or a stop signal (true),
 * or until a call read here is to run on this thread (false). */
static bool read_lines(void *ctx)
{
	struct reader *r = ctx;
	struct pollfd fds[2] = {{r->in_fd, POLLIN, 0},
	                        {tb_stop_fd(), POLLIN, 0}};

	if (drain_lines(r))
		return false;
	while (!tb_stop_signal() && !r->lines.eof) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			tb_log(TB_LOG_ERROR, "poll: %s", strerror(errno));
			break;
		}
		if (fds[1].revents)
			break;
		if (!fds[0].revents)
			continue;
		long n = tb_lines_fill(&r->lines, r->in_fd);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			tb_log(TB_LOG_ERROR, "stdin: %s", strerror(errno));
			break;
		}
		if (drain_lines(r))
			return false;
	}
	if (tb_stop_signal())
		tb_log(TB_LOG_INFO, "signal %d: shutting down",
		       tb_stop_signal());
	else if (r->lines.eof)
		tb_log(TB_LOG_INFO, "end of input: shutting down");
	return true;
}

int tb_serve(const struct tb_serve_opts *opts)
{
	struct tb_stop_saved old;
	struct out out = {opts->out_fd, false};
	unsigned n = opts->workers
	                 ? opts->workers
	                 : tb_fd_budget_default_workers(DEFAULT_WORKERS_MIN,
	                                                DEFAULT_WORKERS_MAX);
	struct tb_workers *pool = NULL;
	struct tb_parker *parker = NULL;
	struct tb_mcp *session = NULL;
	struct tb_session *client = NULL;
	struct reader reader = {opts->in_fd, NULL, {0}};
	int rc = 1;

	if (n > MAX_WORKERS)
		n = MAX_WORKERS;
	/* Not dumpable: /proc/<this pid>/fd, and so the protocol's stdout, is
	 * closed to the sandboxes' commands that run as the same user (an
	 * exec makes each of them dumpable again). A server run as root is not
	 * guarded by this: its commands are root too (plugins/local). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		tb_log(TB_LOG_WARN, "prctl(PR_SET_DUMPABLE): %s",
		       strerror(errno));
	if (tb_stop_install(&old) < 0) {
		tb_log(TB_LOG_ERROR, "signal pipe: %s", strerror(errno));
		return 1;
	}
	/* The workers and parked waits the open-file limit allows. */
	tb_fd_budget_init(n, 0);
	n = tb_fd_budget_get()->workers;
	/* n threads for calls, one more for the reading */
	pool = tb_workers_new(n + 1, n * QUEUE_PER_WORKER);
	if (!pool)
		goto out;
	parker = tb_parker_new(pool);
	if (!parker)
		goto out;
	/* stdio is one client: one session for the life of the process. */
	client = tb_session_new();
	if (!client)
		goto out;
	/* Admission: at most the queue's worth of calls in flight, so no
	 * call is refused "busy", and a memory budget; past either the
	 * reading waits (the pipe fills, the client waits). */
	struct tb_mcp_opts mo = {
	    .write = write_line,
	    .ctx = &out,
	    .pool = pool,
	    .parker = parker,
	    .test_tools = opts->test_tools,
	    .session = client,
	    .max_calls = n * QUEUE_PER_WORKER,
	    .max_cost = MAX_IN_FLIGHT_COST,
	    .interrupted = interrupted,
	};
	session = tb_mcp_new(&mo);
	if (!session)
		goto out;
	reader.session = session;
	tb_lines_init(&reader.lines, TB_LINE_MAX);
	if (tb_workers_lead(pool, read_lines, &reader) < 0)
		goto out;
	tb_log(TB_LOG_INFO, "serving MCP on stdio with up to %u workers", n);
	tb_workers_wait_lead(pool);
	rc = 0;
out:
	if (session)
		tb_mcp_shutdown(session);
	tb_parker_free(parker);
	tb_workers_drain(pool);
	tb_mcp_free(session);
	tb_lines_free(&reader.lines);
	/* The client is gone: its session ends (its sandboxes are cleaned up
	 * but those running tasks). */
	tb_session_end(client);
	tb_stop_run_hooks();
	tb_stop_restore(&old);
	return rc;
}
