/* Task ids: 32 lowercase hex digits (128 bits) from the kernel's CSPRNG. */
#ifndef TB_TASK_ID_H
#define TB_TASK_ID_H

#define TB_TASK_ID_LEN 32

/* Fills out (TB_TASK_ID_LEN + 1 bytes) with a fresh id and its NUL.
 * Returns 0, or -1 when the kernel gave no randomness. Thread-safe. */
int tb_task_id_new(char *out);

/* True when s matches ^[0-9a-f]{32}$. */
int tb_task_id_valid(const char *s);

#endif /* TB_TASK_ID_H */
