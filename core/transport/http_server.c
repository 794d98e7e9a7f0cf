/* tb_serve_http (http.h): starts libmicrohttpd on one internal thread
 * (epoll, suspend and resume), the worker pool and the socket watcher,
 * serves until SIGTERM or SIGINT, then stops in order: new work refused,
 * sessions ended (their calls cancelled and finished), connections
 * closed, sessions cleaned up, hooks run. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/fd_budget.h"
#include "base/listen_addr.h"
#include "base/log.h"
#include "protocol/parker.h"
#include "protocol/workers.h"
#include "transport/http_internal.h"
#include "transport/sd_daemon.h"
#include "transport/stop.h"

#define DEFAULT_PATH "/mcp"
#define DEFAULT_WORKERS 16
#define MAX_WORKERS 256
#define QUEUE_PER_WORKER 32
#define DEFAULT_SESSION_IDLE_S (30 * 60)
#define DEFAULT_IDLE_TIMEOUT_S 30
#define DEFAULT_MAX_CONNECTIONS 2048
#define DEFAULT_ANSWER_BUDGET ((size_t)64 << 20)
#define DEFAULT_HEADER_TIMEOUT_S 10
#define DEFAULT_BODY_TIMEOUT_S 60
/* Per connection: the request's headers, a read buffer, the answer's
 * headers. Bodies are copied out as they arrive, so 1,000 waiting
 * connections cost at most 16 MiB. */
#define CONNECTION_MEMORY ((size_t)16 * 1024)
#define PEM_MAX ((size_t)1 << 20)

/* libmicrohttpd's own messages, as log lines. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	vsnprintf(line, sizeof line, fmt, ap);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	tb_log(TB_LOG_INFO, "http: %s", line);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;

	if (*req_cls)
		http_exchange_completed(*req_cls, toe);
	*req_cls = NULL;
	/* The connection's next request starts now. */
	http_conn_enter(srv->conns, http_conn_of(conn), HTTP_CONN_HEAD);
}

/* Counts connections and enters each in the table of deadlines
 * (socket_context) from its start to its close; one opened past the
 * descriptor budget's is marked there, to be answered 503 and closed. */
static void on_connection(void *cls, struct MHD_Connection *conn,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
	struct http_server *srv = cls;
	bool started = code == MHD_CONNECTION_NOTIFY_STARTED;

	http_stats_connections(started ? 1 : -1);
	if (!started) {
		__atomic_sub_fetch(&srv->connections, 1, __ATOMIC_ACQ_REL);
		http_conn_close(srv->conns, *socket_context);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *ci =
	    mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		*socket_context = http_conn_open(srv->conns, ci->connect_fd);
	if (__atomic_add_fetch(&srv->connections, 1, __ATOMIC_ACQ_REL) >
	    srv->max_connections)
		http_conn_set_over_budget(*socket_context);
}

/* The watcher's tick: ends idle sessions, shuts connections past their
 * deadlines down, and gives back the memory of large answers gone since
 * the last. */
static void tick(void *ctx)
{
	struct http_server *srv = ctx;
	unsigned idle = srv->opts->session_idle_s ? srv->opts->session_idle_s
	                                          : DEFAULT_SESSION_IDLE_S;

	http_sessions_expire(srv->sessions, (int64_t)idle * 1000);
	http_answers_trim(srv);
	http_conns_sweep(srv->conns);
}

/* The deadlines of http_conns.h from the options; max: the connections
 * served at once. */
static struct http_conn_limits conn_limits(const struct tb_http_opts *o,
                                           unsigned max)
{
	unsigned cap = o->max_unauthenticated ? o->max_unauthenticated
	                                      : (max / 4 ? max / 4 : 1);

	return (struct http_conn_limits){
	    .header_ms =
	        1000 * (o->header_timeout_s ? o->header_timeout_s
	                                    : DEFAULT_HEADER_TIMEOUT_S),
	    .idle_ms = 1000 * (o->idle_timeout_s ? o->idle_timeout_s
	                                         : DEFAULT_IDLE_TIMEOUT_S),
	    .body_ms = 1000 * (o->body_timeout_s ? o->body_timeout_s
	                                         : DEFAULT_BODY_TIMEOUT_S),
	    /* with no token to ask for, no one is refused */
	    .max_unauthenticated = o->n_credentials > 0 || o->oauth ? cap : 0,
	};
}

/* Raises the soft limit on descriptors to the hard one, then derives
 * from it the workers, connections and parked waits it allows
 * (base/fd_budget.h): every connection holds one, and a wait parked on it
 * one more. */
static void raise_nofile(unsigned workers, unsigned max_connections)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			tb_log(TB_LOG_WARN, "setrlimit(RLIMIT_NOFILE): %s",
			       strerror(errno));
	}
	tb_fd_budget_init(workers, max_connections);
}

/* Reads a PEM file into a new string; NULL (logged) on failure. */
static char *read_pem(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = f ? malloc(PEM_MAX + 1) : NULL;
	size_t n = 0;

	if (text) {
		n = fread(text, 1, PEM_MAX, f);
		if (ferror(f) || n == PEM_MAX) {
			free(text);
			text = NULL;
		} else {
			text[n] = '\0';
		}
	}
	if (!text)
		tb_log(TB_LOG_ERROR, "tls: cannot read %s: %s", path,
		       f ? "unreadable or over 1 MiB" : strerror(errno));
	if (f)
		fclose(f);
	return text;
}

struct tls_pem {
	char *cert, *key;
};

/* Starts the daemon on addr; NULL (logged) on failure. */
static struct MHD_Daemon *start_daemon(struct http_server *srv,
                                       const struct tb_listen_addr *addr,
                                       const struct tls_pem *tls)
{
	const struct tb_http_opts *o = srv->opts;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
	struct sockaddr *sa;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD |
	                 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;

	if (addr->ipv6) {
		inet_pton(AF_INET6, addr->addr, &sin6.sin6_addr);
		sin6.sin6_port = htons((uint16_t)addr->port);
		sa = (struct sockaddr *)&sin6;
		flags |= MHD_USE_IPv6;
	} else {
		inet_pton(AF_INET, addr->addr, &sin.sin_addr);
		sin.sin_port = htons((uint16_t)addr->port);
		sa = (struct sockaddr *)&sin;
	}
	if (tls->cert)
		flags |= MHD_USE_TLS;
	struct MHD_OptionItem options[] = {
	    {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL},
	    /* An inherited socket (LISTEN_FDS) is already bound to addr. */
	    {o->listen_fd > 0 ? MHD_OPTION_LISTEN_SOCKET : MHD_OPTION_SOCK_ADDR,
	     o->listen_fd, sa},
	    {MHD_OPTION_CONNECTION_LIMIT,
	     srv->max_connections + tb_fd_budget_get()->refusing, NULL},
	    {MHD_OPTION_CONNECTION_TIMEOUT,
	     o->idle_timeout_s ? o->idle_timeout_s : DEFAULT_IDLE_TIMEOUT_S,
	     NULL},
	    {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)CONNECTION_MEMORY,
	     NULL},
	    {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, srv},
	    {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, srv},
	    {tls->cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0,
	     tls->cert},
	    {MHD_OPTION_HTTPS_MEM_KEY, 0, tls->key},
	    {MHD_OPTION_END, 0, NULL},
	};
	struct MHD_Daemon *d =
	    mhd.start_daemon(flags, 0, NULL, NULL, http_on_request, srv,
	                     MHD_OPTION_ARRAY, options, MHD_OPTION_END);
	if (!d)
		tb_log(TB_LOG_ERROR,
		       "cannot listen on %s%s%s:%u (in use, or "
		       "not an address of this machine?)",
		       addr->ipv6 ? "[" : "", addr->addr, addr->ipv6 ? "]" : "",
		       addr->port);
	return d;
}

/* Waits for SIGTERM or SIGINT. */
static void wait_for_stop(void)
{
	struct pollfd pfd = {tb_stop_fd(), POLLIN, 0};

	while (!tb_stop_signal())
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
			tb_log(TB_LOG_ERROR, "poll: %s", strerror(errno));
			break;
		}
	tb_log(TB_LOG_INFO, "signal %d: shutting down", tb_stop_signal());
}

/* Stops in order (see the top of this file). */
static void stop(struct http_server *srv)
{
	__atomic_store_n(&srv->stopping, 1, __ATOMIC_RELEASE);
	MHD_socket listener = mhd.quiesce_daemon(srv->daemon);
	http_sessions_expire(srv->sessions, 0);
	http_stateless_shutdown(srv->stateless);
	http_sessions_wait_closed(srv->sessions);
	http_watch_stop(srv->watch);
	srv->watch = NULL;
	mhd.stop_daemon(srv->daemon);
	srv->daemon = NULL;
	if (listener != MHD_INVALID_SOCKET)
		close(listener);
	http_sessions_wait(srv->sessions);
	http_stateless_wait(srv->stateless);
}

/* Logs where the server listens: the one line tests and operators read. */
static void log_listening(struct http_server *srv,
                          const struct tb_listen_addr *addr, bool tls)
{
	const union MHD_DaemonInfo *info =
	    mhd.get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	unsigned port = info ? info->port : addr->port;

	tb_listen_addr_format(addr, port, srv->listen_host,
	                      sizeof srv->listen_host);
	tb_log_always(TB_LOG_INFO, "listening on %s://%s%s",
	              tls ? "https" : "http", srv->listen_host, srv->path);
}

int tb_serve_http(const struct tb_http_opts *opts)
{
	struct http_server srv = {.opts = opts};
	struct tb_listen_addr addr;
	struct tls_pem tls = {NULL, NULL};
	struct tb_stop_saved old;
	char why[256];
	unsigned n = opts->workers ? opts->workers : DEFAULT_WORKERS;
	int rc = 1;

	if (n > MAX_WORKERS)
		n = MAX_WORKERS;
	if (http_mhd_load(why, sizeof why) < 0) {
		tb_log(TB_LOG_ERROR, "--http: cannot load libmicrohttpd: %s",
		       why);
		return 1;
	}
	srv.path = opts->path ? opts->path : DEFAULT_PATH;
	srv.auth = (struct tb_http_auth_view){
	    .public_url = opts->public_url,
	    .issuer = opts->issuer,
	    .scope_names = {opts->scope_names[0], opts->scope_names[1],
	                    opts->scope_names[2]},
	    .challenge_scope = opts->challenge_scope,
	};
	srv.answer_budget =
	    opts->answer_budget ? opts->answer_budget : DEFAULT_ANSWER_BUDGET;
	if (tb_listen_addr_parse(opts->listen, &addr, why, sizeof why) < 0) {
		tb_log(TB_LOG_ERROR, "--http %s: %s", opts->listen, why);
		return 1;
	}
	if (opts->tls_cert || opts->tls_key) {
		if (mhd.is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			tb_log(TB_LOG_ERROR, "tls: this libmicrohttpd was "
			                     "built without TLS");
			return 1;
		}
		tls.cert = read_pem(opts->tls_cert);
		tls.key = tls.cert ? read_pem(opts->tls_key) : NULL;
		if (!tls.key)
			goto out_tls;
	}
	raise_nofile(n, opts->max_connections ? opts->max_connections
	                                      : DEFAULT_MAX_CONNECTIONS);
	n = tb_fd_budget_get()->workers;
	srv.max_connections = tb_fd_budget_get()->connections;
	/* Every request in flight holds a connection: by default the cap is
	 * the connections' (so a burst of new calls queues rather than
	 * being refused), and the pool's queue holds that many. */
	srv.max_inflight =
	    opts->max_inflight ? opts->max_inflight : srv.max_connections;
	/* As on stdio: /proc/<pid> stays closed to the commands of the
	 * sandboxes that run as this user. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		tb_log(TB_LOG_WARN, "prctl(PR_SET_DUMPABLE): %s",
		       strerror(errno));
	if (tb_stop_install(&old) < 0) {
		tb_log(TB_LOG_ERROR, "signal pipe: %s", strerror(errno));
		goto out_tls;
	}
	http_stats_register();
	http_answers_malloc_setup();
	struct http_conn_limits limits = conn_limits(opts, srv.max_connections);
	srv.conns = http_conns_new(&limits);
	if (!srv.conns)
		goto out_stop;
	srv.pool = tb_workers_new(n, srv.max_inflight > n * QUEUE_PER_WORKER
	                                 ? srv.max_inflight
	                                 : n * QUEUE_PER_WORKER);
	srv.parker = srv.pool ? tb_parker_new(srv.pool) : NULL;
	srv.sessions = srv.parker ? http_sessions_new(srv.pool, srv.parker,
	                                              opts->test_tools)
	                          : NULL;
	srv.stateless = srv.sessions ? http_stateless_new(srv.pool, srv.parker,
	                                                  opts->test_tools)
	                             : NULL;
	unsigned idle_s = opts->session_idle_s ? opts->session_idle_s
	                                       : DEFAULT_SESSION_IDLE_S;
	unsigned tick_ms = idle_s * 250 < 1000 ? idle_s * 250 : 1000;
	srv.watch = srv.stateless ? http_watch_start(http_exchange_gone,
	                                             http_exchange_release,
	                                             tick, &srv, tick_ms)
	                          : NULL;
	srv.daemon = srv.watch ? start_daemon(&srv, &addr, &tls) : NULL;
	if (srv.daemon) {
		log_listening(&srv, &addr, tls.cert != NULL);
		if (opts->n_credentials == 0 && !opts->oauth)
			tb_log_always(TB_LOG_WARN,
			              "unauthenticated: no token source is "
			              "configured, so every request is served "
			              "as principal local with every scope "
			              "(loopback only)");
		tb_sd_notify("READY=1");
		wait_for_stop();
		tb_sd_notify("STOPPING=1");
		stop(&srv);
		rc = 0;
	}
	http_watch_stop(srv.watch);
	/* Every session has ended, so nothing is parked any more. */
	tb_parker_free(srv.parker);
	if (srv.pool)
		tb_workers_drain(srv.pool);
	http_sessions_free(srv.sessions);
	http_stateless_free(srv.stateless);
	http_conns_free(srv.conns);
out_stop:
	tb_stop_run_hooks();
	tb_stop_restore(&old);
out_tls:
	free(tls.cert);
	free(tls.key);
	return rc;
}
