/* What the files of the HTTP transport share: the server, the session
 * table, the per-request exchange, the watcher of suspended sockets and
 * the replies. Private to core/transport/http*.c. */
#ifndef TB_HTTP_INTERNAL_H
#define TB_HTTP_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/principal.h"
#include "protocol/mcp.h"
#include "transport/http.h"
#include "transport/http_conns.h"
#include "transport/http_challenge.h"
#include "transport/http_mhd.h"

#define HTTP_SID_BYTES 16 /* 128 random bits, sent as 32 hex digits */
#define HTTP_SID_LEN (2 * HTTP_SID_BYTES)

/* Whether conn was opened past the descriptor budget. */
bool http_over_budget(struct MHD_Connection *conn);

struct http_exchange;
struct http_sessions;
struct http_stateless;
struct http_stateless_table;
struct http_watch;
struct tb_rpc_msg;

struct http_server {
	const struct tb_http_opts *opts;
	const char *path;
	struct tb_http_auth_view auth; /* the challenges' view of opts */
	char listen_host[64]; /* "addr:port" as a Host header names it */
	struct MHD_Daemon *daemon;
	struct tb_workers *pool;
	struct tb_parker *parker; /* waiting calls, parked without a thread */
	struct http_sessions *sessions;
	struct http_stateless_table *stateless;
	struct http_watch *watch;
	struct http_conns *conns; /* the connections' deadlines */
	unsigned max_connections; /* served at once (the descriptor budget's);
	                             the budget's `refusing` more are only
	                             answered 503 */
	unsigned connections;     /* atomic: open now */
	unsigned max_inflight;    /* POSTs being served and not parked */
	unsigned inflight;        /* atomic: POSTs being served */
	int stopping;             /* atomic: new work is refused */
	size_t answer_budget;     /* bytes of answers not yet sent */
	size_t unsent;            /* atomic: answer bytes counted against it */
	int trim;                 /* atomic: a large answer was freed */
};

/* --- the budget of unsent answers (http_answers.c) --- */

/* Counts bytes more unless that passes the budget while other answers
 * are unsent: then false, with why (for the caller's tool error). */
bool http_answers_reserve(struct http_server *srv, size_t bytes, char *why,
                          size_t whylen);

/* Makes what *held counts (bytes of one answer) now; 0 once the answer is
 * sent or dropped. */
void http_answers_count(struct http_server *srv, size_t *held, size_t now);

/* Gives freed memory back to the system once a large answer has gone
 * (the watcher's tick). */
void http_answers_trim(struct http_server *srv);

/* Tunes the allocator so that large blocks go back to the system when
 * freed (once, before the workers start). */
void http_answers_malloc_setup(void);

/* --- sessions (http_sessions.c) --- */

struct http_session {
	char id[HTTP_SID_LEN + 1];
	struct tb_principal who; /* who made it: only they find it */
	struct tb_mcp *mcp;
	struct tb_session *core;
	pthread_mutex_t feed; /* one message or a close at a time */
	bool ended;           /* under feed and the table's lock */
	unsigned refs;        /* under the table's lock */
	unsigned active;      /* exchanges in progress, idem */
	int64_t last_used_ms; /* idem */
	struct http_session *next;
	struct http_sessions *table;
};

/* A table of sessions whose cleanup runs on pool. */
struct http_sessions *http_sessions_new(struct tb_workers *pool,
                                        struct tb_parker *parker,
                                        bool test_tools);

/* A new session of principal who (copied), active for the caller and not
 * yet findable; NULL when out of memory. */
struct http_session *http_session_create(struct http_sessions *t,
                                         const struct tb_principal *who,
                                         const char *remote);

/* Makes a created session findable by its id (its initialize succeeded). */
void http_session_publish(struct http_session *s);

/* The live session with this id made by principal who, active for the
 * caller, or NULL (another principal's session is not found). */
struct http_session *http_session_find(struct http_sessions *t, const char *id,
                                       const struct tb_principal *who);

/* The caller's exchange with s is over: s may go idle. */
void http_session_done(struct http_session *s);

/* Feeds one message to s unless it has ended (false). */
bool http_session_feed(struct http_session *s, const char *msg, size_t len,
                       const struct tb_mcp_sink *sink);

/* Ends s (DELETE, a failed initialize): it is no longer found, its calls
 * are cancelled, and its cleanup runs on a worker once the last is gone. */
void http_session_end(struct http_session *s);

/* Ends every session idle for idle_ms or more; when idle_ms is 0 every
 * session, and those made later as soon as they are published. */
void http_sessions_expire(struct http_sessions *t, int64_t idle_ms);

/* Waits until every session made is closed: none has a call left. */
void http_sessions_wait_closed(struct http_sessions *t);

/* Waits until every ended session's cleanup has run. */
void http_sessions_wait(struct http_sessions *t);

/* Frees t; every session must be gone (http_sessions_wait). */
void http_sessions_free(struct http_sessions *t);

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t http_now_ms(void);

/* --- stateless requests (http_stateless.c) --- */

/* A table of the protocol objects of stateless requests, whose calls run
 * on pool and park on parker. */
struct http_stateless_table *http_stateless_new(struct tb_workers *pool,
                                                struct tb_parker *parker,
                                                bool test_tools);

/* A protocol object for one request of principal who (copied), in no
 * session; NULL when out of memory. Holds a reference for the caller's
 * exchange. */
struct http_stateless *http_stateless_open(struct http_stateless_table *t,
                                           const struct tb_principal *who,
                                           const char *remote);
struct tb_mcp *http_stateless_mcp(const struct http_stateless *e);

/* The request is over: e's calls are shut down, and e goes once they have
 * ended (and the exchange's reference is released). Once per e is
 * enough; later calls do nothing. */
void http_stateless_close(struct http_stateless *e);

/* Drops the exchange's reference (closing e if it was not). */
void http_stateless_release(struct http_stateless *e);

/* The server stops: closes every live one and waits until their calls
 * have ended. */
void http_stateless_shutdown(struct http_stateless_table *t);

/* Waits until every one is gone. */
void http_stateless_wait(struct http_stateless_table *t);
void http_stateless_free(struct http_stateless_table *t);

/* --- MCP 2026-07-28 requests (http_modern.c) --- */

/* Whether a POST's message is modern: its params claim a version in
 * _meta, or its MCP-Protocol-Version header names a modern one. */
bool http_modern_message(struct http_exchange *ex, const struct tb_rpc_msg *m);

/* Checks a modern message's envelope and that MCP-Protocol-Version,
 * Mcp-Method and Mcp-Name (=?base64?...?= decoded) repeat its body;
 * answers 400 itself (returning false, *rc set) when one does not. */
bool http_modern_check(struct http_exchange *ex, const struct tb_rpc_msg *m,
                       enum MHD_Result *rc);

/* The HTTP status of a modern JSON reply: 404 for -32601, 400 for
 * -32020..-32022, else 200. */
unsigned http_modern_status(const char *reply, size_t len);

/* The HTTP status of any JSON reply: 503 for a call refused for want of
 * room (TB_RPC_SERVER_BUSY), else 200. */
unsigned http_legacy_status(const char *reply, size_t len);

/* --- the watcher of suspended sockets (http_watch.c) --- */

/* Starts a thread that calls gone(item) when the peer of a watched socket
 * has closed it, release(item) some time after http_watch_remove, and
 * tick(ctx) every tick_ms. NULL on failure. */
struct http_watch *http_watch_start(void (*gone)(void *item),
                                    void (*release)(void *item),
                                    void (*tick)(void *ctx), void *tick_ctx,
                                    unsigned tick_ms);

/* Watches fd for item; -1 when it cannot (then nothing is released). */
int http_watch_add(struct http_watch *w, int fd, void *item);

/* Stops watching fd; release(item) follows on the watcher's thread. */
void http_watch_remove(struct http_watch *w, int fd, void *item);

/* Stops the thread and releases every removed item. */
void http_watch_stop(struct http_watch *w);

/* --- one request and its answer (http_exchange.c) --- */

/* One request and its answer. References: MHD's (until the request
 * completes), one per call holding the sink, one per watch, one for an
 * SSE response's reader. */
struct http_exchange {
	unsigned refs; /* atomic */
	pthread_mutex_t lock;
	struct http_server *srv;
	struct MHD_Connection *conn;
	struct http_conn *link;           /* conn's entry in srv->conns */
	struct http_session *session;     /* found or made for it, or NULL */
	struct http_stateless *stateless; /* a modern request's, or NULL */
	bool modern;                      /* of MCP 2026-07-28 */
	struct tb_principal who;          /* who sent it, once authenticated */
	/* An OAuth token waits for the issuer's keys (MHD's thread): */
	bool auth_may_defer; /* a POST's first call: let the body come */
	bool auth_deferred;  /* checked again once the body is in */
	bool auth_woken;     /* under lock: the keys' fetch ended */
	char remote[64];     /* the peer's address, or "" */
	int64_t start_ms;
	unsigned status; /* the status queued, or 0 */
	bool counted;    /* in srv->inflight */
	/* The request (MHD's thread only): */
	char *body;
	size_t len, cap;
	char *id_key;     /* of a request, or NULL */
	bool is_request;  /* not a notification or a response */
	bool new_session; /* its answer carries Mcp-Session-Id */
	bool fed;         /* the body went to the session */
	bool dropping;    /* the body is read and dropped (no memory, past
	                     the cap, or not a POST's) */
	size_t dropped;   /* its bytes, up to just past the cap */
	/* The answer, under lock: */
	char *out; /* the JSON reply, or SSE frames not yet sent */
	size_t out_len, out_cap, out_pos;
	char *sent;       /* the JSON reply MHD sends (freed with it) */
	size_t held;      /* bytes counted in srv->unsent for it */
	unsigned holds;   /* calls holding the sink */
	bool sse;         /* a notification came first: SSE */
	bool replied;     /* the reply was written */
	bool suspended;   /* by us, waiting for output */
	bool watched;     /* fd is on the watcher */
	bool client_gone; /* the client hung up: nothing more is sent */
	int fd;
};

/* A new exchange for a request of conn; NULL when out of memory. */
struct http_exchange *http_exchange_new(struct http_server *srv,
                                        struct MHD_Connection *conn);

/* Appends body bytes; -1 once the body passes the cap. */
int http_exchange_append(struct http_exchange *ex, const char *data, size_t n);

/* Serves the complete POST body (MHD's thread): parses it, finds or makes
 * the session, feeds it, and answers or suspends the connection. */
enum MHD_Result http_exchange_post(struct http_exchange *ex);

/* Counts ex among the POSTs in flight unless the cap is reached or the
 * server is stopping (false). */
bool http_exchange_admit(struct http_exchange *ex);

/* Called again after a resume: answers, or suspends once more. */
enum MHD_Result http_exchange_resumed(struct http_exchange *ex);

/* MHD finished the request (toe says how): cancels a call still running
 * and drops MHD's reference. */
void http_exchange_completed(struct http_exchange *ex,
                             enum MHD_RequestTerminationCode toe);

/* The watcher's callbacks for exchanges. */
void http_exchange_gone(void *ex);
void http_exchange_release(void *ex);

/* Waiting for the issuer's keys: ready is the verifier's callback (any
 * thread; takes arm's reference), arm takes a reference for it and clears
 * auth_woken, and park suspends the connection unless the callback came
 * first (false: check again now). MHD's thread but ready. */
void http_exchange_auth_arm(struct http_exchange *ex);
void http_exchange_auth_disarm(struct http_exchange *ex);
bool http_exchange_auth_park(struct http_exchange *ex);
void http_exchange_auth_ready(void *ex);

/* --- who is calling (http_auth.c) --- */

/* Authenticates ex's request by its Authorization header (never its query
 * string): sets ex->who and returns true, or answers (401 with a challenge,
 * 400, or 503 while the issuer's keys cannot be had) and returns false
 * with *rc set. MHD's thread. */
bool http_authenticate(struct http_exchange *ex, enum MHD_Result *rc);

/* Whether ex->who holds the scopes message method (params) needs; else
 * answers 403 with an insufficient_scope challenge and returns false. */
bool http_scope_allows(struct http_exchange *ex, const char *method,
                       const json_t *params, enum MHD_Result *rc);

/* Whether url is the protected resource metadata's (at the root or
 * followed by the endpoint's path), served when oauth is configured. */
bool http_is_resource_metadata(const struct http_server *srv, const char *url);
enum MHD_Result http_reply_resource_metadata(struct http_exchange *ex);

/* --- the access handler (http_request.c) --- */

enum MHD_Result http_on_request(void *cls, struct MHD_Connection *conn,
                                const char *url, const char *method,
                                const char *version, const char *upload_data,
                                size_t *upload_data_size, void **req_cls);

/* --- the request head (http_head.c) --- */

/* Whether the head of ex's request is sound: field names are tokens, no
 * value holds a control byte (a NUL included), no line is folded, Host
 * comes at most once (exactly once when need_host). Else answers 400
 * itself (returning false, *rc set). method is the access handler's (it
 * points at the head in libmicrohttpd's buffer). */
bool http_head_sound(struct http_exchange *ex, const char *method,
                     bool need_host, enum MHD_Result *rc);

/* --- replies (http_reply.c) --- */

/* Queues response for ex's request with status and counts it; destroys
 * response. */
enum MHD_Result http_queue(struct http_exchange *ex, unsigned status,
                           struct MHD_Response *response);

/* Queues a JSON-RPC error (id null) with HTTP status and code. */
enum MHD_Result http_reply_error(struct http_exchange *ex, unsigned status,
                                 int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Queues a JSON-RPC error (id null, code -32000) with one more header. */
enum MHD_Result http_reply_error_with(struct http_exchange *ex, unsigned status,
                                      const char *name, const char *value,
                                      const char *message);

/* Queues text (copied) with a content type. */
enum MHD_Result http_reply_text(struct http_exchange *ex, unsigned status,
                                const char *type, const char *text);

/* Queues text (len bytes, taken: freed whatever happens; NULL: MHD_NO)
 * with a content type and one more header (name NULL: none). */
enum MHD_Result http_reply_owned(struct http_exchange *ex, unsigned status,
                                 const char *type, char *text, size_t len,
                                 const char *name, const char *value);

/* Queues a message (stolen) as application/json. */
enum MHD_Result http_reply_json(struct http_exchange *ex, unsigned status,
                                json_t *msg);

/* conn's entry in the table of deadlines, or NULL. */
struct http_conn *http_conn_of(struct MHD_Connection *conn);

/* A request header's value, or NULL. */
const char *http_header(struct http_exchange *ex, const char *name);

/* --- metrics (http_stats.c) --- */

void http_stats_register(void);
void http_stats_response(unsigned status);
void http_stats_connections(int delta);
void http_stats_sessions(int delta);
void http_stats_inflight(int delta);
void http_stats_duration(unsigned status, double seconds);
void http_stats_unsent(int64_t delta);
void http_stats_answer_refused(void);
void http_stats_cut(unsigned late, unsigned evicted);

#endif /* TB_HTTP_INTERNAL_H */
