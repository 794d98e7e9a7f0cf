/* Which supervisor runs the verbs on a box: the native taskbox-supervisor
 * where the provider runs commands on this host (TASKBOX_FEATURE_HOST_EXEC)
 * and the binary is found; elsewhere the static native one copied into the
 * sandbox (sup_upload.h) where it runs there, else the portable python3
 * one; an instance's "supervisor" forces "static" or "python3". */
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

/* Finds the program NAME beside the running taskbox executable, then in
 * $(pkglibexecdir); writes its absolute path into out. Returns 1 if found,
 * else 0 with out empty. */
int tb_sup_find_program(const char *name, char *out, size_t outlen);

/* Takes $VAR (set and non-empty) as an absolute path to an executable into
 * out. Returns 1, or 0 with out empty and a warning logged. */
int tb_sup_env_program(const char *var, char *out, size_t outlen);

/* True when the verbs on instances of DESC use the native supervisor. */
int tb_sup_native_for(const struct taskbox_provider *desc);

/* The supervisors a verb can run with. */
enum tb_sup_kind {
	TB_SUP_PYTHON,      /* python3 -c with the embedded source */
	TB_SUP_HOST_NATIVE, /* the host's binary, seen at its host path */
	TB_SUP_STATIC,      /* the static binary uploaded into the sandbox */
};

/* Which supervisor BOX's verbs use first: python3 for an instance with
 * "supervisor": "python3"; the host's native one where the provider runs
 * commands on this host and it ran there; by default elsewhere the
 * uploaded static one where it runs in the sandbox (probed by the first
 * verb, remembered per sandbox: tb_sup_static_runs); the static one for
 * "supervisor": "static" or a sandbox this process found without python3;
 * else python3. */
enum tb_sup_kind tb_sup_choose(struct tb_box *box);

/* Writes how a verb starts with KIND into argv (a path, or python3 with
 * its flags and the embedded source) and returns how many entries. */
size_t tb_sup_prefix(enum tb_sup_kind kind, const char **argv);

/* The native supervisor could not be run on BOX's instance (the path is
 * not visible inside its sandboxes): its later verbs use python3.
 * Thread-safe. */
void tb_sup_native_unusable(const struct tb_box *box, int exit_code);

#endif /* TB_SUP_NATIVE_H */
