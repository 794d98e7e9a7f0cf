/* A plugin built against the current header with the ABI 1.5 ops: its one
 * sandbox, fake-1, belongs to "alice@example.org". Loaded by
 * tests/unit/test_abi_compat.c. */
#include "fake_ops.h"

#define ABI15_OWNER "alice@example.org"
#define ABI15_CREATED 1700000000

_Static_assert(TASKBOX_ABI_MINOR >= 5, "built against a 1.5 header");

/* True when info, of its own struct_size, has field. */
#define INFO_HAS(info, field)                                                  \
	((info)->struct_size >=                                                \
	 offsetof(struct taskbox_sandbox_info, field) + sizeof((info)->field))

/* Fills info, up to its struct_size, for fake-1. */
static void abi15_fill(struct taskbox_sandbox_info *info)
{
	if (INFO_HAS(info, id))
		snprintf(info->id, sizeof info->id, "fake-1");
	if (INFO_HAS(info, owner))
		snprintf(info->owner, sizeof info->owner, ABI15_OWNER);
	if (INFO_HAS(info, created_s))
		info->created_s = ABI15_CREATED;
	if (INFO_HAS(info, expires_s))
		info->expires_s = 0;
}

static int abi15_describe(void *conn, struct taskbox_sandbox_info *info,
                          char *errbuf, size_t errlen)
{
	(void)conn;
	(void)errbuf;
	(void)errlen;
	abi15_fill(info);
	return TASKBOX_OK;
}

/* Lists fake-1 unless owner names someone else. */
static int abi15_list(void *instance, const char *owner, taskbox_list_fn each,
                      void *arg, char *errbuf, size_t errlen)
{
	struct taskbox_sandbox_info info;

	(void)instance;
	(void)errbuf;
	(void)errlen;
	if (owner && strcmp(owner, ABI15_OWNER) != 0)
		return TASKBOX_OK;
	memset(&info, 0, sizeof info);
	info.struct_size = sizeof info;
	abi15_fill(&info);
	(void)each(arg, &info);
	return TASKBOX_OK;
}

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    sizeof(struct taskbox_provider),
    "fake_abi15",
    "1.5",
    "built against the 1.5 header, with describe and list",
    FAKE_OPS,
    0,
    NULL,
    abi15_describe,
    abi15_list,
};

TASKBOX_PROVIDER_DEFINE(desc)
