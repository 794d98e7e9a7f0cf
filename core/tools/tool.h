/* The tool registry: what a tool declares and how its handler is called.
 * The registry is tools_registry.c; the call's services (cancellation,
 * progress, sleeping) are the protocol layer's, reached through the
 * call's ops (call.c). */
#ifndef TB_TOOL_H
#define TB_TOOL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct tb_principal;
struct tb_session;

/* One in-flight tools/call as its handler sees it. The protocol layer owns
 * the call (its own struct begins with this one) and supplies the ops;
 * valid for the handler's duration only. Every function below is safe to
 * call from the handler's thread. */
typedef struct tb_tool_call tb_call;

/* A handler's continuation (see tb_call_park): returns like a handler,
 * or TB_TOOL_PARKED after parking the call again. It owns state. */
typedef int (*tb_tool_step_fn)(tb_call *call, void *state, json_t **result);

/* What a handler may ask of the call that runs it, supplied from above. */
struct tb_call_ops {
	bool (*cancelled)(const tb_call *call);
	void (*progress)(tb_call *call, double progress, double total,
	                 const char *message);
	bool (*sleep)(tb_call *call, uint32_t timeout_ms);
	void (*park)(tb_call *call, uint32_t ms, int fd, bool borrowed,
	             tb_tool_step_fn step, void *state);
};

struct tb_tool_call {
	const struct tb_call_ops *ops;
	struct tb_session *session; /* the caller's session; NULL in an era
	                               without sessions */
	const struct tb_principal *principal; /* who calls; never NULL */
	/* Set by a handler that refused the call for a rule of tenancy
	 * ("not_owner", "quota"), for the audit trail; the answer itself
	 * does not say (a sandbox not the caller's looks missing). */
	const char *refusal;
};

/* A tool handler. args has already been validated against input_schema
 * (types, required, unknown fields, lengths, ranges, patterns, enums), so
 * the handler only checks rules a schema cannot say.
 *   Success: return 0 and set *result to a new JSON object: it becomes
 *   structuredContent and, serialized, the text content block.
 *   Tool error: return 1 and set *result to a new JSON object holding at
 *   least {"error": "<message naming the field and the rule>"}; the result
 *   is sent with isError: true.
 * The core takes ownership of *result. */
typedef int (*tb_tool_fn)(tb_call *call, json_t *args, json_t **result);

/* What a handler (or a step) returns after tb_call_park. */
#define TB_TOOL_PARKED 2

/* What a handler (or a step) returns when it refuses the call for want of
 * room (the descriptor budget), with *result a tool error object as for
 * 1: a transport that answers such calls with a status of its own (HTTP:
 * 503) gets a JSON-RPC error TB_RPC_SERVER_BUSY with its message; others a
 * tool error. */
#define TB_TOOL_BUSY 3

enum tb_tool_flags {
	TB_TOOL_TEST_ONLY = 1u << 0, /* listed only with the test switch */
};

struct tb_tool {
	const char *name;          /* [a-z_]+, unique */
	const char *title;         /* human title */
	const char *description;   /* what it does, for the model */
	const char *input_schema;  /* JSON Schema text; type object with
	                              additionalProperties: false */
	const char *output_schema; /* JSON Schema text, or NULL */
	const char *annotations;   /* JSON object text, or NULL */
	const char *execution;     /* JSON object text, e.g.
	                              {"taskSupport":"optional"}, or NULL */
	tb_tool_fn fn;
	unsigned flags; /* enum tb_tool_flags */
	unsigned scope; /* the scope a call needs (enum tb_scope of
	                   base/principal.h); 0: taskbox:run */
};

/* tb_box_open_as for call's principal; a sandbox that exists but is not
 * the caller's marks the call's refusal "not_owner". */
struct tb_box;
int tb_call_open_box(tb_call *call, const char *sandbox_id, const char *field,
                     struct tb_box *box, char *err, size_t errlen);

/* tb_box_connect for a resolved box, then the owner check as above. */
int tb_call_connect_box(tb_call *call, struct tb_box *box, char *err,
                        size_t errlen);

/* Adds a tool. The struct and its strings are borrowed for the life of the
 * process. Call before serving starts; not thread-safe. Returns -1 (and logs
 * why) when a schema does not parse or the name is taken. */
int tb_tools_register(const struct tb_tool *tool);

/* True once the client has sent notifications/cancelled for this call (or
 * the server is shutting down). Handlers doing long work poll it. */
bool tb_call_cancelled(const tb_call *call);

/* A callback form of tb_call_cancelled for
 * taskbox_exec_req.cancelled: pass tb_call_cancelled_cb and the call. */
int tb_call_cancelled_cb(void *call);

/* Sends notifications/progress when the request carried a progressToken;
 * otherwise does nothing. total < 0 means unknown. message may be NULL. */
void tb_call_progress(tb_call *call, double progress, double total,
                      const char *message);

/* Blocks up to timeout_ms or until the call is cancelled, whichever comes
 * first; returns true when cancelled. Wakes at once on cancellation. */
bool tb_call_sleep(tb_call *call, uint32_t timeout_ms);

/* Parks the call: step(call, state, result) runs after ms, or at once
 * when the call is cancelled, on some worker, and no thread is held
 * meanwhile. The handler (or step) returns TB_TOOL_PARKED right after and
 * touches neither call nor state again. A step that finds the call
 * cancelled frees state and returns 0 or 1 at once (nobody reads it). */
void tb_call_park(tb_call *call, uint32_t ms, tb_tool_step_fn step,
                  void *state);

/* tb_call_park, and the step is also due as soon as fd polls readable.
 * Takes fd (-1: none). */
void tb_call_park_fd(tb_call *call, uint32_t ms, int fd, tb_tool_step_fn step,
                     void *state);

/* tb_call_park_fd with a descriptor that stays the caller's: it must stay
 * open until the step runs (parking costs no descriptor of its own). */
void tb_call_park_on(tb_call *call, uint32_t ms, int fd, tb_tool_step_fn step,
                     void *state);

/* The session the call belongs to, or NULL. */
struct tb_session *tb_call_session(const tb_call *call);

/* Fills *w so that a task wait (tasks/task_wait.h) sleeps on the call and
 * reports its progress through it. */
struct tb_waiter;
void tb_call_waiter(tb_call *call, struct tb_waiter *w);

#endif /* TB_TOOL_H */
