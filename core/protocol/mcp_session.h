/* The session and call state shared by mcp.c, mcp_tools.c and
 * tool_call.c. Private to the MCP core. */
#ifndef TB_MCP_SESSION_H
#define TB_MCP_SESSION_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "base/principal.h"
#include "protocol/mcp.h"
#include "protocol/mcp_era.h"
#include "protocol/parker.h"
#include "tools/tool.h"
#include "tools/tools_registry.h"

struct tb_mcp {
	struct tb_mcp_opts opts;
	struct tb_principal who; /* opts.principal points here */
	char remote[64];         /* opts.remote points here */
	/* The client's clientInfo (initialize's, or a modern request's
	 * _meta), for the audit trail; set by the reader before its calls. */
	char client_name[128];
	char client_version[64];
	char current_method_name[32]; /* the message being handled's */
	pthread_mutex_t out_lock;     /* one writer at a time */
	pthread_mutex_t calls_lock; /* guards calls and every call->cancelled */
	struct tb_call *calls;      /* in flight, newest first */
	bool initialized;           /* initialize answered (reader only) */
	enum tb_mcp_era era;        /* set once by the reader, before any
	                               call of that era exists */
	bool current_modern;        /* the message being handled is a modern
	                               request (reader only) */
	bool client_ready;          /* notifications/initialized seen */
	char version[16];  /* negotiated (legacy) or claimed (modern); set
	                      before any call */
	int shutting_down; /* atomic */
	/* Admission, under calls_lock: */
	unsigned inflight;    /* calls on the list (changed under the lock,
	                         atomically: admit reads it without) */
	size_t inflight_cost; /* their cost */
	unsigned parked;      /* of them, parked (holding no worker) */
	pthread_cond_t room;  /* a call left the list */
	size_t line_cost;     /* the line being handled (reader only) */
	struct tb_mcp_sink current; /* where the message being handled is
	                               answered (reader only) */
	unsigned current_method;    /* its method's metrics label (idem) */
	/* Closing (tb_mcp_close), under calls_lock: */
	unsigned live;             /* calls made and not yet freed */
	void (*closed)(void *ctx); /* called once live is 0 */
	void *closed_ctx;
};

/* A message whose cost passes this gives its memory back to the system
 * once it is freed (malloc_trim). */
#define TB_RPC_TRIM_COST ((size_t)1 << 20)

/* A request other than a tool's handler run on a worker (the tasks/...
 * methods, a task-augmented tools/call): returns the whole response
 * message for c->id, or NULL when out of memory. */
typedef json_t *(*tb_call_job)(struct tb_call *c);

struct tb_call {
	struct tb_tool_call base; /* first: what the handler is given */
	struct tb_mcp *mcp;
	const struct tb_tool_entry *tool; /* NULL for a job without a tool */
	tb_call_job job;                  /* NULL: run tool's handler */
	/* A job that parks (its work calls tb_call_park and it returns NULL)
	 * is answered by job_end with its last step's rc and output. */
	json_t *(*job_end)(struct tb_call *c, int rc, json_t *out);
	json_t *id;
	char *id_key;
	json_t *args;           /* the tool's arguments, or a job's params */
	json_t *progress_token; /* or NULL */
	pthread_mutex_t lock;   /* with wake: tb_call_sleep */
	pthread_cond_t wake;
	int cancelled;           /* atomic: by the client */
	size_t cost;             /* of its message, for admission */
	struct tb_mcp_sink sink; /* where its progress and answer go (held) */
	unsigned method;         /* its request's metrics label */
	bool modern;             /* its results carry the modern fields */
	/* Parking (tb_call_park), set by the handler or step that parks: */
	tb_tool_step_fn step;
	void *step_state;
	uint32_t park_ms;
	int park_fd;          /* wakes the step when readable, or -1 (owned
	                         unless park_borrowed) */
	bool park_borrowed;   /* park_fd stays the step's */
	struct tb_park park;  /* its entry in the parker */
	bool have_progress;   /* last_progress is set */
	double last_progress; /* progress must increase */
	/* The audit trail (mcp_audit.h): */
	char method_name[32];    /* its request's method */
	char audit_id[33];       /* joins its records; "" when not recorded */
	long long start_ms;      /* when it began */
	char audit_sandbox[160]; /* what its handler's output named */
	char audit_task[160];
	const char *audit_outcome; /* its handler's, or NULL */
	bool audit_recorded;       /* its request record was written */
	struct tb_call *next;
};

/* Serialises msg, an answer to the message being handled, and writes it
 * to that message's sink; steals msg. The reader only. */
void tb_mcp_send(struct tb_mcp *s, json_t *msg);

/* Writes a message already serialised (tb_rpc_dump's form) to sink under
 * s's output lock; frees it. NULL is logged as out of memory. reply as in
 * tb_mcp_write_fn. Thread-safe. */
void tb_mcp_write(struct tb_mcp *s, const struct tb_mcp_sink *sink, char *text,
                  bool reply);

/* Serialises msg and writes it to c's sink; steals msg. reply as in
 * tb_mcp_write_fn. Thread-safe. */
void tb_call_send(struct tb_call *c, json_t *msg, bool reply);

/* True when the negotiated version is v or newer. */
bool tb_mcp_at_least(const struct tb_mcp *s, const char *v);

/* The id's in-flight call, or NULL; calls_lock held. */
struct tb_call *tb_mcp_find_call(struct tb_mcp *s, const char *id_key);

/* Checks params' _meta and its progressToken (stored in *token, or
 * NULL); returns an error response for id, or NULL when they are fine. */
json_t *tb_mcp_meta_error(json_t *id, json_t *params, json_t **token);

/* tools/list and tools/call; they answer (or hand off) themselves. */
void tb_mcp_tools_list(struct tb_mcp *s, json_t *id, json_t *params);
void tb_mcp_tools_call(struct tb_mcp *s, json_t *id, const char *id_key,
                       json_t *params);

/* A call's life (tool_call.c): made by tools/call, run on a worker (or
 * inline), then answered unless the client cancelled it, and freed. */
struct tb_call *tb_call_new(struct tb_mcp *s, const struct tb_tool_entry *tool,
                            json_t *id, const char *id_key, json_t *args,
                            json_t *progress_token);
void tb_call_run(void *call);

/* Puts c on the in-flight list and hands it to the pool (or runs it
 * inline without one); answers a busy error itself when the pool is
 * full. Takes ownership of c. */
void tb_call_submit(struct tb_call *c);

/* The CallToolResult for a handler's output: structuredContent (on
 * success, where the version has it) and the same JSON as a text block.
 * Steals out. */
json_t *tb_call_tool_result(const struct tb_call *c, json_t *out, bool error);

/* Takes c off the in-flight list; returns true when the client cancelled
 * it (so no answer is due). */
bool tb_call_unlink(struct tb_call *c);
void tb_call_free(struct tb_call *c);

/* True once c was cancelled by the client or by the server's end. */
bool tb_call_is_cancelled(const struct tb_call *c);

/* Marks c cancelled and wakes its sleeps. */
void tb_call_cancel(struct tb_call *c);

#endif /* TB_MCP_SESSION_H */
