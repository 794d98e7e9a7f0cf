/* The session's sandboxes: those created through this server, which one is
 * the default, and which are retained because a task was started in them.
 * At shutdown every sandbox created here and not retained is destroyed.
 * Sandboxes this session only queried are never recorded. Thread-safe. */
#ifndef TB_SESSION_H
#define TB_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox_ref.h"

/* Records a sandbox created in this session with its lifetime; it becomes
 * the session default. Returns 0, or -1 when out of memory. */
int tb_session_add(const char *sandbox_id, uint32_t lifetime_s);

/* Copies the session default (the newest created sandbox still alive) into
 * out; returns false when there is none. */
bool tb_session_default(char *out, size_t outlen);

/* Copies the ids of up to max sandboxes created here, newest first, into
 * out; returns how many. */
size_t tb_session_ids(char (*out)[TB_SANDBOX_REF_MAX], size_t max);

/* Marks a sandbox created here as retained: it outlives the session. Does
 * nothing for sandboxes created elsewhere. */
void tb_session_retain(const char *sandbox_id);

/* The lifetime a sandbox created here was given; 0 when it was not created
 * in this session (so it is never renewed by us). */
uint32_t tb_session_lifetime(const char *sandbox_id);

/* Forgets a sandbox (after kill_sandbox destroyed it). */
void tb_session_forget(const char *sandbox_id);

/* Serialises the creation of a session default so that two concurrent
 * calls do not both create one. */
void tb_session_create_lock(void);
void tb_session_create_unlock(void);

/* Destroys every sandbox created here and not retained, and forgets all.
 * Registered as the server's shutdown hook. */
void tb_session_shutdown(void);

#endif /* TB_SESSION_H */
