/* Task ids: 32 lowercase hex digits (128 bits) from the kernel's CSPRNG. */
#ifndef TB_TASK_ID_H
#define TB_TASK_ID_H

#include <stdbool.h>

#define TB_TASK_ID_LEN 32

/* Fills out (TB_TASK_ID_LEN + 1 bytes) with a fresh id and its NUL.
 * Returns 0, or -1 when the kernel gave no randomness. Thread-safe. */
int tb_task_id_new(char *out);

/* True when s matches ^[0-9a-f]{32}$. */
int tb_task_id_valid(const char *s);

/* The longest idempotency key start_task takes. */
#define TB_TASK_KEY_MAX 128

/* True when key is an idempotency key: 1 to TB_TASK_KEY_MAX characters of
 * A-Z, a-z, 0-9, '_', '.' and '-'. */
bool tb_task_key_valid(const char *key);

#endif /* TB_TASK_ID_H */
