/* Built for a newer ABI minor than the host's. */
#include "fake_ops.h"

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR + 1,
    sizeof(struct taskbox_provider),
    "fake_minor",
    "1.0",
    "claims a newer ABI minor",
    FAKE_OPS,
    0,
    NULL,
    NULL,
    NULL,
};

TASKBOX_PROVIDER_DEFINE(desc)
