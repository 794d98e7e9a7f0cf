/* A plugin built against the frozen ABI 1.4 header, as one compiled before
 * 1.5 is: its descriptor reports the 1.4 struct_size, and the bytes right
 * after it in the same object are not zero (they point to a describe and a
 * list that abort), so a host that read past struct_size would see them.
 * tests/unit/test_abi_compat.c loads it. */
#include <stdlib.h>

/* First: its include guard keeps fake_ops.h's include of the current
 * header out, so everything here sees the 1.4 declarations only. */
#include "../abi/provider-1.4.h"

#include "fake_ops.h"

_Static_assert(TASKBOX_ABI_MINOR == 4, "built against the 1.4 header");

/* Within the 1.4 descriptor: the host must see it. */
static int abi14_read_files(void *conn, struct taskbox_read_item *const *items,
                            size_t count, char *errbuf, size_t errlen)
{
	(void)conn;
	(void)items;
	(void)count;
	snprintf(errbuf, errlen, "fake_abi14 reads no files");
	return TASKBOX_E_UNSUPPORTED;
}

/* What a 1.5 host would take for describe and list if it ignored
 * struct_size: never to be called. */
static void past_the_end(void)
{
	abort();
}

/* The descriptor and what follows it, in one object. */
struct abi14_storage {
	struct taskbox_provider desc;
	void (*after[2])(void);
};

static const struct abi14_storage storage = {
    {
        TASKBOX_ABI_MAJOR,
        TASKBOX_ABI_MINOR,
        sizeof(struct taskbox_provider),
        "fake_abi14",
        "1.4",
        "built against the 1.4 header",
        FAKE_OPS,
        TASKBOX_FEATURE_HOST_EXEC,
        abi14_read_files,
    },
    {past_the_end, past_the_end},
};

_Static_assert(offsetof(struct abi14_storage, after) ==
                   sizeof(struct taskbox_provider),
               "the nonzero bytes follow the descriptor with no gap");

TASKBOX_PROVIDER_DEFINE(storage.desc)
