/* The host's checks on a plugin's descriptor: ABI version, struct size,
 * required ops, name. Pure functions, no loading. */
#ifndef TB_PROVIDER_CHECK_H
#define TB_PROVIDER_CHECK_H

#include <stddef.h>
#include "taskbox/provider.h"

/* Bytes of struct taskbox_provider a plugin built for ABI minor `minor`
 * must report: everything up to and including its last required op.
 * Returns 0 for a minor newer than the host's. */
size_t tb_provider_min_size(uint32_t minor);

/* Checks desc, the descriptor a module named modname returned, and copies
 * the part it reports (min(struct_size, host size) bytes) into the zeroed
 * *out, so fields past its struct_size read as absent. On a rule broken
 * writes the reason (without the file name) into err and returns -1. */
int tb_provider_check(const struct taskbox_provider *desc, const char *modname,
                      struct taskbox_provider *out, char *err, size_t errlen);

/* True when name is a valid plugin or module name: ^[a-z][a-z0-9_]{0,31}$ */
int tb_plugin_name_valid(const char *name);

/* The enum taskbox_status name of code, e.g. "TASKBOX_E_INVALID", or
 * "unknown status" for a code this host does not know. */
const char *tb_status_name(int code);

/* Makes a plugin's message safe for a one-line log: stops at the buffer's
 * last byte and turns control characters into spaces. */
void tb_errbuf_tidy(char *buf, size_t len);

#endif /* TB_PROVIDER_CHECK_H */
