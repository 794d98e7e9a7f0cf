/* Sandbox ids as clients see them: "<instance>:<native id>", where instance
 * is a configured provider instance and native id is what its plugin made.
 * The prefix routes every call to its instance. */
#ifndef TB_SANDBOX_REF_H
#define TB_SANDBOX_REF_H

#include <stddef.h>
#include "taskbox/provider.h"

/* Longest instance name, without the NUL. */
#define TB_INSTANCE_NAME_MAX 32
/* Size of a buffer that holds any full sandbox id with its NUL. */
#define TB_SANDBOX_REF_MAX (TB_INSTANCE_NAME_MAX + 1 + TASKBOX_SANDBOX_ID_MAX)

/* The sandbox_id pattern of every tool's schema. Its parts' lengths are
 * left to maxLength and tb_sandbox_ref_parse: bounded repetitions make
 * glibc's regcomp build a large automaton (about 0.7 ms to compile and
 * 10-20 us to match, against a few microseconds without them). */
#define TB_SANDBOX_ID_PATTERN "^[a-z][a-z0-9_-]*:[A-Za-z0-9_.-]+$"

struct tb_sandbox_ref {
	char instance[TB_INSTANCE_NAME_MAX + 1];
	char native[TASKBOX_SANDBOX_ID_MAX];
};

/* True when name matches ^[a-z][a-z0-9_-]{0,31}$. */
int tb_instance_name_valid(const char *name);

/* True when id matches ^[A-Za-z0-9_.-]{1,127}$. */
int tb_native_id_valid(const char *id);

/* Splits and validates a full sandbox id. On a broken rule writes a message
 * naming field (e.g. "sandbox_id") and the rule into err and returns -1. */
int tb_sandbox_ref_parse(const char *text, const char *field,
                         struct tb_sandbox_ref *ref, char *err, size_t errlen);

/* Writes "<instance>:<native>" into out (TB_SANDBOX_REF_MAX bytes). Returns
 * -1 when either part is invalid. */
int tb_sandbox_ref_format(const char *instance, const char *native, char *out,
                          size_t outlen);

#endif /* TB_SANDBOX_REF_H */
