/* Reports the minimum struct_size: the optional ops and the features it
 * also fills in lie past it and must read as absent. */
#include "fake_ops.h"

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    offsetof(struct taskbox_provider, ops.write_file),
    "fake_oldsize",
    "1.0",
    "only the required ops count",
    FAKE_OPS,
    TASKBOX_FEATURE_HOST_EXEC, /* past struct_size: reads as 0 */
    NULL,
    NULL,
    NULL,
};

TASKBOX_PROVIDER_DEFINE(desc)
