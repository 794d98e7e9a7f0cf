/* One MCP session: lifecycle, dispatch and the tools methods, fed one line
 * at a time. It never touches a file descriptor: every outgoing message
 * goes through the write callback, serialised by the session. */
#ifndef TB_MCP_H
#define TB_MCP_H

#include <stdbool.h>
#include <stddef.h>

struct tb_mcp;
struct tb_session;
struct tb_workers;

/* Receives one outgoing message as a line without its newline. Called with
 * the session's output lock held, from the reader or a worker thread. */
typedef void (*tb_mcp_write_fn)(void *ctx, const char *line, size_t len);

struct tb_mcp_opts {
	tb_mcp_write_fn write;
	void *ctx;
	struct tb_workers *pool;    /* runs tools/call; NULL runs it inline */
	bool test_tools;            /* TB_TOOL_TEST_ONLY tools are visible */
	struct tb_session *session; /* the transport's session for this
	                               connection (borrowed), or NULL */
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

/* Answers a line that exceeded the length limit. The reader only. */
void tb_mcp_line_too_long(struct tb_mcp *s, size_t max);

/* Starts the end: every in-flight and later call sees itself cancelled
 * (their results are still sent). Thread-safe. */
void tb_mcp_shutdown(struct tb_mcp *s);

/* Frees s; every call must have finished (drain the pool first). */
void tb_mcp_free(struct tb_mcp *s);

/* The protocol versions served, newest first, NULL-terminated. */
extern const char *const tb_mcp_versions[];

#endif /* TB_MCP_H */
