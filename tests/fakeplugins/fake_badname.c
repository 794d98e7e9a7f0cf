/* Names itself differently from its module. */
#include "fake_ops.h"

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    sizeof(struct taskbox_provider),
    "other_name",
    "1.0",
    "a mismatched name",
    FAKE_OPS,
    0,
    NULL,
    NULL,
    NULL,
};

TASKBOX_PROVIDER_DEFINE(desc)
