/* A well-formed plugin. */
#include "fake_ops.h"

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    sizeof(struct taskbox_provider),
    "fake_good",
    "1.0",
    "a plugin that follows every rule",
    FAKE_OPS,
    0,
    NULL,
    NULL,
    NULL,
};

TASKBOX_PROVIDER_DEFINE(desc)
