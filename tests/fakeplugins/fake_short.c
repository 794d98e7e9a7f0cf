/* Reports a struct_size that ends before its last required op. */
#include "fake_ops.h"

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    offsetof(struct taskbox_provider, ops.destroy),
    "fake_short",
    "1.0",
    "struct_size too short",
    FAKE_OPS,
    0,
    NULL,
    NULL,
    NULL,
};

TASKBOX_PROVIDER_DEFINE(desc)
