/* One MCP session: lifecycle, dispatch and the tools methods, fed one line
 * at a time. It never touches a file descriptor: every outgoing message
 * goes through the write callback, serialised by the session. */
#ifndef TB_MCP_H
#define TB_MCP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct tb_mcp;
struct tb_parker;
struct tb_principal;
struct tb_session;
struct tb_workers;

/* Receives one outgoing message as a line without its newline; reply is
 * true for a response (the last message an incoming request causes) and
 * false for a notification. Called with the session's output lock held,
 * from the reader or a worker thread. */
typedef void (*tb_mcp_write_fn)(void *ctx, const char *line, size_t len,
                                bool reply);

/* Where the messages one incoming message causes go: its answer, and the
 * progress and answer of a call it starts. A call holds the sink (hold)
 * from its start to its end (release); both may be NULL when ctx outlives
 * the session. */
struct tb_mcp_sink {
	tb_mcp_write_fn write;
	void *ctx;
	void (*hold)(void *ctx);
	void (*release)(void *ctx);
};

struct tb_mcp_opts {
	tb_mcp_write_fn write;
	void *ctx;
	struct tb_workers *pool;    /* runs tools/call; NULL runs it inline */
	struct tb_parker *parker;   /* parks waiting calls (protocol/parker.h);
	                               NULL: they wait on their worker */
	bool test_tools;            /* TB_TOOL_TEST_ONLY tools are visible */
	struct tb_session *session; /* the transport's session for this
	                               connection (borrowed), or NULL */
	/* Who makes every request of this object (copied by tb_mcp_new);
	 * NULL: "local", every scope. */
	const struct tb_principal *principal;
	/* Admission (0: none): before it takes a line, tb_mcp_handle_line
	 * waits while max_calls calls are in flight, or while their cost
	 * (bytes, and TB_RPC_VALUE_COST per JSON value) and the line's would
	 * pass max_cost; one call is always let in. interrupted (may be NULL,
	 * called with ctx) ends such a wait when it returns true. Without
	 * admission, a call that finds the pool full is answered "busy". */
	unsigned max_calls;
	size_t max_cost;
	bool (*interrupted)(void *ctx);
};

/* Returns NULL when out of memory. */
struct tb_mcp *tb_mcp_new(const struct tb_mcp_opts *opts);

/* Handles one incoming line (no newline), after waiting for admission
 * (see tb_mcp_opts). One thread at a time: the reader (which may move
 * between threads, with a lock between). */
void tb_mcp_handle_line(struct tb_mcp *s, const char *line, size_t len);

/* tb_mcp_handle_line with the messages it causes going to sink (copied)
 * instead of the session's write callback. */
void tb_mcp_handle_message(struct tb_mcp *s, const char *msg, size_t len,
                           const struct tb_mcp_sink *sink);

/* Cancels the in-flight request whose id has this key (tb_rpc_id_key), as
 * notifications/cancelled would: it is never answered. Returns whether one
 * was in flight. Thread-safe. */
bool tb_mcp_cancel_request(struct tb_mcp *s, const char *id_key);

/* The negotiated protocol version, or "" before initialize. */
const char *tb_mcp_version(const struct tb_mcp *s);

/* Answers a line that exceeded the length limit. The reader only. */
void tb_mcp_line_too_long(struct tb_mcp *s, size_t max);

/* Starts the end: every in-flight and later call sees itself cancelled
 * (their results are still sent). Thread-safe. */
void tb_mcp_shutdown(struct tb_mcp *s);

/* Shuts s down (tb_mcp_shutdown) and calls done(ctx) once no call is in
 * flight: at once, on this thread, when none is, else on the thread that
 * ends the last one. done may free s. Thread-safe; once per session. */
void tb_mcp_close(struct tb_mcp *s, void (*done)(void *ctx), void *ctx);

/* Frees s; every call must have finished (drain the pool first). */
void tb_mcp_free(struct tb_mcp *s);

/* The scopes (enum tb_scope bits) a message of method with params needs:
 * a tool's for tools/call, taskbox:read for tasks/get, tasks/result and
 * tasks/list, taskbox:run for tasks/cancel and tasks/update, none (0) for
 * the rest (initialize, ping, tools/list, ...). Thread-safe. */
unsigned tb_mcp_scope_needed(const char *method, const json_t *params);

/* The protocol versions served, newest first, NULL-terminated. */
extern const char *const tb_mcp_versions[];

#endif /* TB_MCP_H */
