/* The static native supervisor for remote sandboxes (by default where it
 * runs there, always with "supervisor": "static", and where a sandbox has
 * no python3): found on the host beside taskbox, uploaded once into the
 * sandbox under .taskbox/bin (named by its content, so versions never mix),
 * and which sandboxes this process found without python3 or unable to run
 * it. */
#ifndef TB_SUP_UPLOAD_H
#define TB_SUP_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "tasks/box.h"

/* The static supervisor's path on the host, or NULL when this taskbox has
 * none: $TASKBOX_SUPERVISOR_STATIC (an absolute path), then beside the
 * running executable, then $(pkglibexecdir). Looked up once. Thread-safe. */
const char *tb_sup_static_host_path(void);

/* Where the static supervisor lives in a sandbox, relative to the home the
 * verbs run in (.taskbox/bin/taskbox-supervisor-<content hash>), or NULL
 * when there is none to upload (or it could not be read). Thread-safe. */
const char *tb_sup_static_sandbox_path(void);

/* Whether this process found BOX's sandbox without python3. */
bool tb_sup_pythonless(const struct tb_box *box);

/* Remembers that BOX's sandbox has no python3 (the most recent 256 sandboxes
 * are kept). Thread-safe. */
void tb_sup_mark_pythonless(const struct tb_box *box);

/* Why BOX's verbs run the static supervisor, for messages: "has no python3"
 * or "is set to run the static supervisor (...)". */
const char *tb_sup_static_why(const struct tb_box *box);

/* What to do when the static supervisor cannot run in BOX: use an image
 * with python3, or set the instance's "supervisor" to "auto" or
 * "python3". */
const char *tb_sup_static_remedy(const struct tb_box *box);

/* Copies the static supervisor into BOX's sandbox at
 * tb_sup_static_sandbox_path(): checks the sandbox's machine type against
 * the host's, writes a temporary file with mode 0700 and renames it into
 * place (concurrent uploads are harmless). Returns the provider's status,
 * or TASKBOX_E_UNSUPPORTED with err saying why it cannot be used there. */
int tb_sup_upload(struct tb_box *box, char *err, size_t errlen);

/* Whether BOX's sandbox runs the static supervisor (for the default,
 * "supervisor": "auto"): decided once per sandbox and remembered. The
 * first call probes it in one exec (there and answering, or absent and
 * of the host's machine type), copies it in when absent and checks that
 * it runs (an exec and a write more). A sandbox of another machine type,
 * or where it does not run (noexec home, a binary of another machine),
 * gives 0 with one info line logged; so does a host with no static
 * supervisor, and a provider's failure (then without remembering).
 * Thread-safe. */
int tb_sup_static_runs(struct tb_box *box);

#endif /* TB_SUP_UPLOAD_H */
