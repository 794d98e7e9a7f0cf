/* Exports no taskbox_provider_entry_v1: its entry carries another major, as
 * a plugin built against a future header would. */
#include "fake_ops.h"

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR + 1,
    0,
    sizeof(struct taskbox_provider),
    "fake_nosym",
    "1.0",
    "no entry for this ABI major",
    FAKE_OPS,
    0,
    NULL,
    NULL,
    NULL,
};

TASKBOX_EXPORT const struct taskbox_provider *taskbox_provider_entry_v2(void);
TASKBOX_EXPORT const struct taskbox_provider *taskbox_provider_entry_v2(void)
{
	return &desc;
}
