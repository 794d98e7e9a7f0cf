/* Reports the minimum struct_size: the optional ops it also fills in
 * (renew) lie past it and must read as absent. */
#include "fake_ops.h"

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    offsetof(struct taskbox_provider, ops.write_file),
    "fake_oldsize",
    "1.0",
    "only the required ops count",
    FAKE_OPS,
};

TASKBOX_PROVIDER_DEFINE(desc)
