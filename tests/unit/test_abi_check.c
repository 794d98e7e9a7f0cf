/* The host's descriptor checks, on descriptors built in memory. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "host/provider_check.h"

static int ok_init(const struct taskbox_host *h, const char *s, void **i,
                   char *e, size_t n)
{
	(void)h;
	(void)s;
	(void)e;
	(void)n;
	*i = NULL;
	return TASKBOX_OK;
}
static void ok_fini(void *i)
{
	(void)i;
}
static int ok_create(void *i, const struct taskbox_create_req *r, char *id,
                     char *e, size_t n)
{
	(void)i, (void)r, (void)id, (void)e, (void)n;
	return TASKBOX_OK;
}
static int ok_connect(void *i, const char *id, void **c, char *e, size_t n)
{
	(void)i, (void)id, (void)c, (void)e, (void)n;
	return TASKBOX_OK;
}
static void ok_close(void *c)
{
	(void)c;
}
static int ok_exec(void *c, const struct taskbox_exec_req *r,
                   struct taskbox_exec_result *res, char *e, size_t n)
{
	(void)c, (void)r, (void)res, (void)e, (void)n;
	return TASKBOX_OK;
}
static int ok_read(void *c, const char *p, uint64_t o, size_t l,
                   struct taskbox_buf *d, uint64_t *s, char *e, size_t n)
{
	(void)c, (void)p, (void)o, (void)l, (void)d, (void)s, (void)e, (void)n;
	return TASKBOX_OK;
}
static int ok_destroy(void *i, const char *id, char *e, size_t n)
{
	(void)i, (void)id, (void)e, (void)n;
	return TASKBOX_OK;
}
static int ok_renew(void *c, uint32_t s, char *e, size_t n)
{
	(void)c, (void)s, (void)e, (void)n;
	return TASKBOX_OK;
}

static struct taskbox_provider good(void)
{
	struct taskbox_provider d = {
	    TASKBOX_ABI_MAJOR,
	    TASKBOX_ABI_MINOR,
	    sizeof(struct taskbox_provider),
	    "mod",
	    "2.3",
	    "in memory",
	    {ok_init, ok_fini, ok_create, ok_connect, ok_close, ok_exec,
	     ok_read, ok_destroy, NULL, ok_renew},
	    TASKBOX_FEATURE_HOST_EXEC,
	    NULL,
	    NULL,
	    NULL,
	};
	return d;
}

static char err[512];
static struct taskbox_provider out;

Test(abi_check, accepts_a_good_descriptor)
{
	struct taskbox_provider d = good();

	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert_str_eq(out.name, "mod");
	cr_assert_str_eq(out.version, "2.3");
	cr_assert(out.ops.renew == ok_renew);
	cr_assert(out.ops.write_file == NULL);
}

Test(abi_check, rejects_null)
{
	cr_assert_eq(tb_provider_check(NULL, "mod", &out, err, sizeof err), -1);
	cr_assert_str_eq(err, "entry returned NULL");
}

Test(abi_check, rejects_another_major)
{
	struct taskbox_provider d = good();

	d.abi_major = TASKBOX_ABI_MAJOR + 1;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), -1);
	cr_assert_str_eq(err, "ABI major 2, host speaks 1");
	d.abi_major = 0;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), -1);
	cr_assert_str_eq(err, "ABI major 0, host speaks 1");
}

Test(abi_check, rejects_a_newer_minor)
{
	struct taskbox_provider d = good();
	char want[64];

	d.abi_minor = TASKBOX_ABI_MINOR + 1;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), -1);
	snprintf(want, sizeof want,
	         "ABI minor %d is newer than the host's 1.%d",
	         TASKBOX_ABI_MINOR + 1, TASKBOX_ABI_MINOR);
	cr_assert_str_eq(err, want);
}

Test(abi_check, minimum_size_ends_after_destroy)
{
	cr_assert_eq(tb_provider_min_size(0),
	             offsetof(struct taskbox_provider, ops.destroy) +
	                 sizeof(void *));
	cr_assert_eq(tb_provider_min_size(1), tb_provider_min_size(0),
	             "1.1 appended only the optional features");
	cr_assert_eq(tb_provider_min_size(2), tb_provider_min_size(0),
	             "1.2 appended only the optional read_files");
	cr_assert_eq(tb_provider_min_size(3), tb_provider_min_size(0),
	             "1.3 appended no field to the descriptor");
	cr_assert_eq(tb_provider_min_size(4), tb_provider_min_size(0),
	             "1.4 appended no field to the descriptor");
	cr_assert_eq(tb_provider_min_size(5), tb_provider_min_size(0),
	             "1.5 appended only the optional describe and list");
	cr_assert_eq(tb_provider_min_size(TASKBOX_ABI_MINOR + 1), 0);
}

Test(abi_check, features_are_copied)
{
	struct taskbox_provider d = good();

	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert_eq(out.features, TASKBOX_FEATURE_HOST_EXEC);
}

Test(abi_check, a_1_0_plugin_has_no_features)
{
	struct taskbox_provider d = good();

	/* What a plugin built against the 1.0 header reports. */
	d.abi_minor = 0;
	d.struct_size = offsetof(struct taskbox_provider, features);
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert_eq(out.features, 0, "features lie past a 1.0 struct_size");
	cr_assert(out.ops.renew == ok_renew);
}

static int ok_read_files(void *conn, struct taskbox_read_item *const *items,
                         size_t count, char *errbuf, size_t errlen)
{
	(void)conn;
	(void)items;
	(void)count;
	(void)errbuf;
	(void)errlen;
	return TASKBOX_OK;
}

Test(abi_check, a_1_1_plugin_has_no_read_files)
{
	struct taskbox_provider d = good();

	d.read_files = ok_read_files;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert(out.read_files == ok_read_files);
	/* What a plugin built against the 1.1 header reports. */
	d.abi_minor = 1;
	d.struct_size = offsetof(struct taskbox_provider, read_files);
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert_null(out.read_files,
	               "read_files lies past a 1.1 struct_size");
	cr_assert_eq(out.features, TASKBOX_FEATURE_HOST_EXEC);
}

static int ok_describe(void *conn, struct taskbox_sandbox_info *info,
                       char *errbuf, size_t errlen)
{
	(void)conn, (void)info, (void)errbuf, (void)errlen;
	return TASKBOX_OK;
}

static int ok_list(void *instance, const char *owner, taskbox_list_fn each,
                   void *arg, char *errbuf, size_t errlen)
{
	(void)instance, (void)owner, (void)each, (void)arg, (void)errbuf,
	    (void)errlen;
	return TASKBOX_OK;
}

Test(abi_check, a_1_5_plugin_may_leave_describe_and_list_null)
{
	struct taskbox_provider d = good();

	d.abi_minor = 5;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert_null(out.describe);
	cr_assert_null(out.list);
	d.describe = ok_describe;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "describe without list: %s", err);
	cr_assert(out.describe == ok_describe);
	cr_assert_null(out.list);
	d.describe = NULL;
	d.list = ok_list;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "list without describe: %s", err);
	cr_assert_null(out.describe);
	cr_assert(out.list == ok_list);
}

Test(abi_check, a_1_4_plugin_has_no_describe_nor_list)
{
	struct taskbox_provider d = good();

	d.read_files = ok_read_files;
	d.describe = ok_describe; /* what lies past a 1.4 descriptor */
	d.list = ok_list;
	/* What a plugin built against the 1.4 header reports. */
	d.abi_minor = 4;
	d.struct_size = offsetof(struct taskbox_provider, describe);
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert_null(out.describe, "describe lies past a 1.4 struct_size");
	cr_assert_null(out.list, "list lies past a 1.4 struct_size");
	cr_assert(out.read_files == ok_read_files);
	/* A 1.5 descriptor that ends after describe has no list. */
	d.abi_minor = 5;
	d.struct_size = offsetof(struct taskbox_provider, list);
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert(out.describe == ok_describe);
	cr_assert_null(out.list, "list lies past struct_size");
}

Test(abi_check, rejects_a_short_struct)
{
	struct taskbox_provider d = good();

	d.struct_size = tb_provider_min_size(0) - 1;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), -1);
	cr_assert(strstr(err, "struct_size") && strstr(err, "shorter than"),
	          "%s", err);
	d.struct_size = 0;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), -1);
}

Test(abi_check, fields_past_struct_size_are_absent)
{
	struct taskbox_provider d = good();

	d.struct_size = tb_provider_min_size(0);
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert(out.ops.renew == NULL, "renew lies past struct_size");
	cr_assert(out.ops.destroy == ok_destroy);
}

Test(abi_check, a_longer_struct_is_accepted)
{
	struct {
		struct taskbox_provider d;
		void *appended_later;
	} big = {good(), (void *)&big};

	big.d.struct_size = sizeof big;
	cr_assert_eq(tb_provider_check(&big.d, "mod", &out, err, sizeof err), 0,
	             "%s", err);
	cr_assert(out.ops.renew == ok_renew);
}

#define OP(name)                                                               \
	{                                                                      \
#name, offsetof(struct taskbox_provider_ops, name)             \
	}

Test(abi_check, rejects_each_null_required_op)
{
	static const struct {
		const char *name;
		size_t offset;
	} required[] = {OP(init),  OP(fini), OP(create),    OP(connect),
	                OP(close), OP(exec), OP(read_file), OP(destroy)};
	char want[64];

	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
		struct taskbox_provider d = good();

		memset((char *)&d.ops + required[i].offset, 0, sizeof(void *));
		cr_assert_eq(
		    tb_provider_check(&d, "mod", &out, err, sizeof err), -1,
		    "op %s", required[i].name);
		snprintf(want, sizeof want, "required op %s is NULL",
		         required[i].name);
		cr_assert_str_eq(err, want);
	}
}

Test(abi_check, optional_ops_may_be_null)
{
	struct taskbox_provider d = good();

	d.ops.renew = NULL;
	d.ops.write_file = NULL;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0);
}

Test(abi_check, name_must_match_the_module)
{
	struct taskbox_provider d = good();

	cr_assert_eq(tb_provider_check(&d, "other", &out, err, sizeof err), -1);
	cr_assert_str_eq(err, "descriptor name \"mod\" does not match the "
	                      "module name \"other\"");
	d.name = NULL;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), -1);
	cr_assert_str_eq(err, "descriptor has no name");
}

Test(abi_check, missing_version_reads_as_empty)
{
	struct taskbox_provider d = good();

	d.version = NULL;
	d.description = NULL;
	cr_assert_eq(tb_provider_check(&d, "mod", &out, err, sizeof err), 0);
	cr_assert_str_eq(out.version, "");
	cr_assert_str_eq(out.description, "");
}

Test(abi_check, plugin_names)
{
	cr_assert(tb_plugin_name_valid("local"));
	cr_assert(tb_plugin_name_valid("a_1"));
	cr_assert(tb_plugin_name_valid("abcdefghijklmnopqrstuvwxyz012345"));
	cr_assert_not(
	    tb_plugin_name_valid("abcdefghijklmnopqrstuvwxyz0123456"));
	cr_assert_not(tb_plugin_name_valid(""));
	cr_assert_not(tb_plugin_name_valid(NULL));
	cr_assert_not(tb_plugin_name_valid("1abc"));
	cr_assert_not(tb_plugin_name_valid("Local"));
	cr_assert_not(tb_plugin_name_valid("a-b"));
	cr_assert_not(tb_plugin_name_valid("../x"));
}

Test(abi_check, status_names)
{
	cr_assert_str_eq(tb_status_name(TASKBOX_OK), "TASKBOX_OK");
	cr_assert_str_eq(tb_status_name(TASKBOX_E_CANCELLED),
	                 "TASKBOX_E_CANCELLED");
	cr_assert_str_eq(tb_status_name(99), "unknown status");
	cr_assert_str_eq(tb_status_name(-1), "unknown status");
}

Test(abi_check, errbuf_tidy_makes_one_line)
{
	char buf[8] = {'a', '\n', 'b', '\t', 'c', 'd', 'e', 'f'};

	tb_errbuf_tidy(buf, sizeof buf);
	cr_assert_str_eq(buf, "a b cde");
}
