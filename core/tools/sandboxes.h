/* Making sandboxes for the session and choosing the sandbox of a call. */
#ifndef TB_SANDBOXES_H
#define TB_SANDBOXES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/registry.h"
#include "tools/tool.h"

struct tb_session;

/* Lifetime of a sandbox when create_sandbox is given no timeout. */
#define TB_SANDBOX_DEFAULT_LIFETIME 3600

/* Creates a sandbox on inst owned by call's principal, within its quotas,
 * records it in call's session (it becomes the default) and writes its
 * full id into id (TB_SANDBOX_REF_MAX bytes). *lifetime_s is what was
 * asked (given: explicitly), lowered to the principal's cap when not
 * given. Returns 0, or -1 with a message in err. */
int tb_sandbox_create(tb_call *call, const struct tb_instance *inst,
                      const char *template_name, uint32_t *lifetime_s,
                      bool given, char *id, char *err, size_t errlen);

/* The error of a call without sandbox_id that has no session (MCP
 * 2026-07-28): there is no default sandbox to use or make. */
#define TB_SANDBOX_ID_REQUIRED                                                 \
	"sandbox_id: required: MCP 2026-07-28 has no sessions, so there "      \
	"is no default sandbox; pass the sandbox_id that create_sandbox "      \
	"returned"

/* The sandbox an ordinary tool works in: args' "sandbox_id", else the
 * session default, else (when may_create) a new session default on the
 * default instance; without a session (NULL), sandbox_id is required.
 * Returns 0 with the id in id, or -1 with a message. */
int tb_sandbox_for_call(tb_call *call, json_t *args, bool may_create, char *id,
                        size_t idlen, char *err, size_t errlen);

#endif /* TB_SANDBOXES_H */
