/* Which supervisor runs the verbs on a box: the native taskbox-supervisor
 * where the provider runs commands on this host (TASKBOX_FEATURE_HOST_EXEC)
 * and the binary is found, else the portable python3 one. */
#ifndef TB_SUP_NATIVE_H
#define TB_SUP_NATIVE_H

#include <stddef.h>

#include "tasks/box.h"

/* The most argv entries tb_sup_prefix writes. */
#define TB_SUP_PREFIX_MAX 5

/* The native supervisor's absolute path, or NULL. Looked up once per
 * process: $TASKBOX_SUPERVISOR (an absolute path; "python3" turns the
 * native one off), then beside the running taskbox executable, then
 * $(pkglibexecdir). Thread-safe. */
const char *tb_sup_native_path(void);

/* True when the verbs on instances of DESC use the native supervisor. */
int tb_sup_native_for(const struct taskbox_provider *desc);

/* Writes how a verb starts on BOX into argv (the native path, or python3
 * and its flags and the embedded source) and returns how many entries.
 * *native: on entry, zero asks for python3; on return, which was chosen. */
size_t tb_sup_prefix(const struct tb_box *box, const char **argv, int *native);

/* The native supervisor could not be run on BOX's instance (the path is
 * not visible inside its sandboxes): its later verbs use python3.
 * Thread-safe. */
void tb_sup_native_unusable(const struct tb_box *box, int exit_code);

#endif /* TB_SUP_NATIVE_H */
