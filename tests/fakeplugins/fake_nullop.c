/* Leaves a required op (exec) NULL. */
#include "fake_ops.h"

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    sizeof(struct taskbox_provider),
    "fake_nullop",
    "1.0",
    "exec is missing",
    {fake_init, fake_fini, fake_create, fake_connect, fake_close, NULL,
     fake_read_file, fake_destroy, NULL, NULL},
    0,
    NULL,
    NULL,
    NULL,
};

TASKBOX_PROVIDER_DEFINE(desc)
