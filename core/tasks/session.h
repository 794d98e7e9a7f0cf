/* A session: what one client connection of the legacy MCP era owns. Its
 * sandboxes are those created through it; the newest still alive is its
 * default; those in which a task was started are retained. A transport
 * makes one (stdio: one per process; HTTP: one per Mcp-Session-Id) and ends
 * it, which destroys every sandbox created in it and not retained.
 * Sandboxes a session only queried are never recorded. Its protocol state
 * (negotiated version, calls in flight) is the protocol layer's struct
 * tb_mcp, one per session, which carries this object to every call of the
 * session (tb_call_session). A request of an era
 * without sessions has none: every function takes NULL and then records
 * nothing and finds nothing. Thread-safe. */
#ifndef TB_SESSION_H
#define TB_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/sandbox_ref.h"

struct tb_session;

/* A new, empty session, or NULL when out of memory. */
struct tb_session *tb_session_new(void);

/* Ends s: destroys every sandbox created in it and not retained, then
 * frees it. No call may use s any more. NULL is ignored. */
void tb_session_end(struct tb_session *s);

/* Records a sandbox created in s with its lifetime; it becomes the
 * default. Returns 0, or -1 when out of memory. */
int tb_session_add(struct tb_session *s, const char *sandbox_id,
                   uint32_t lifetime_s);

/* Copies the default (the newest created sandbox still alive) into out;
 * returns false when there is none. */
bool tb_session_default(struct tb_session *s, char *out, size_t outlen);

/* Copies the ids of up to max sandboxes created in s, newest first, into
 * out; returns how many. */
size_t tb_session_ids(struct tb_session *s, char (*out)[TB_SANDBOX_REF_MAX],
                      size_t max);

/* Marks a sandbox created in s as retained: it outlives the session. Does
 * nothing for sandboxes created elsewhere. */
void tb_session_retain(struct tb_session *s, const char *sandbox_id);

/* The lifetime a sandbox created in s was given; 0 when it was not created
 * there (so it is never renewed through s). */
uint32_t tb_session_lifetime(struct tb_session *s, const char *sandbox_id);

/* Forgets a sandbox (after kill_sandbox destroyed it). */
void tb_session_forget(struct tb_session *s, const char *sandbox_id);

/* Serialises the creation of s's default so that two concurrent calls do
 * not both create one. */
void tb_session_create_lock(struct tb_session *s);
void tb_session_create_unlock(struct tb_session *s);

#endif /* TB_SESSION_H */
