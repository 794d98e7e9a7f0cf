/* Built for another ABI major. */
#include "fake_ops.h"

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR + 1,
    0,
    sizeof(struct taskbox_provider),
    "fake_major",
    "1.0",
    "claims the next ABI major",
    FAKE_OPS,
    0,
    NULL,
    NULL,
    NULL,
};

TASKBOX_PROVIDER_DEFINE(desc)
