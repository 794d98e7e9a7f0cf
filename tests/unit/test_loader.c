/* The loader against the fake plugins: each rejection names the file and
 * the reason; good plugins load, share references and unload. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/loader.h"

static char err[1024];

static const char *fake_dir(void)
{
	const char *dir = getenv("TASKBOX_FAKEPLUGIN_DIR");

	cr_assert(dir, "TASKBOX_FAKEPLUGIN_DIR is not set: run through make "
	               "check");
	return dir;
}

static void start(void)
{
	unsetenv("TASKBOX_PLUGIN_PATH");
	cr_assert_eq(tb_loader_init(fake_dir(), err, sizeof err), 0, "%s", err);
}

static void stop(void)
{
	tb_loader_exit();
}

TestSuite(loader, .init = start, .fini = stop);

/* Loads name, expecting a rejection whose message names its file and
 * contains reason. */
static void expect_rejected(const char *name, const char *reason)
{
	char file[512];

	cr_assert_null(tb_plugin_load(name, err, sizeof err), "%s loaded",
	               name);
	snprintf(file, sizeof file, "%s/%s.la: ", fake_dir(), name);
	cr_assert(strncmp(err, file, strlen(file)) == 0,
	          "message does not start with the file: %s", err);
	cr_assert(strstr(err, reason), "message lacks \"%s\": %s", reason, err);
	cr_assert_null(strchr(err, '\n'), "message is not one line: %s", err);
}

Test(loader, loads_a_good_plugin)
{
	struct tb_plugin *p = tb_plugin_load("fake_good", err, sizeof err);
	const struct taskbox_provider *d;
	char file[512];

	cr_assert_not_null(p, "%s", err);
	d = tb_plugin_desc(p);
	cr_assert_str_eq(d->name, "fake_good");
	cr_assert_str_eq(d->version, "1.0");
	cr_assert_eq(d->abi_major, TASKBOX_ABI_MAJOR);
	cr_assert_not_null(d->ops.exec);
	cr_assert_not_null(d->ops.renew);
	snprintf(file, sizeof file, "%s/fake_good.la", fake_dir());
	cr_assert_str_eq(tb_plugin_file(p), file);
	tb_plugin_release(p);
}

Test(loader, same_name_shares_one_plugin)
{
	struct tb_plugin *a = tb_plugin_load("fake_good", err, sizeof err);
	struct tb_plugin *b = tb_plugin_load("fake_good", err, sizeof err);

	cr_assert_not_null(a, "%s", err);
	cr_assert_eq(a, b);
	tb_plugin_release(a);
	/* still loaded: b holds a reference, so its ops remain callable */
	cr_assert_str_eq(tb_plugin_desc(b)->name, "fake_good");
	tb_plugin_release(b);
}

Test(loader, fields_past_struct_size_are_absent)
{
	struct tb_plugin *p = tb_plugin_load("fake_oldsize", err, sizeof err);

	cr_assert_not_null(p, "%s", err);
	cr_assert_null(tb_plugin_desc(p)->ops.renew,
	               "renew lies past the plugin's struct_size");
	cr_assert_eq(tb_plugin_desc(p)->features, 0,
	             "features lie past the plugin's struct_size");
	cr_assert_not_null(tb_plugin_desc(p)->ops.destroy);
	tb_plugin_release(p);
}

Test(loader, rejects_a_missing_entry_symbol)
{
	expect_rejected("fake_nosym", "no taskbox_provider_entry_v1 symbol");
}

Test(loader, rejects_another_major)
{
	expect_rejected("fake_major", "ABI major 2, host speaks 1");
}

Test(loader, rejects_a_newer_minor)
{
	char reason[64];

	snprintf(reason, sizeof reason, "ABI minor %d is newer than the host's",
	         TASKBOX_ABI_MINOR + 1);
	expect_rejected("fake_minor", reason);
}

Test(loader, rejects_a_short_struct)
{
	expect_rejected("fake_short", "struct_size");
}

Test(loader, rejects_a_null_required_op)
{
	expect_rejected("fake_nullop", "required op exec is NULL");
}

Test(loader, rejects_a_mismatched_name)
{
	expect_rejected("fake_badname", "does not match the module name");
}

Test(loader, names_what_it_did_not_find)
{
	cr_assert_null(tb_plugin_load("nonesuch", err, sizeof err));
	cr_assert(strstr(err, "plugin \"nonesuch\" not found (searched "), "%s",
	          err);
	cr_assert(strstr(err, fake_dir()), "%s", err);
	cr_assert(strstr(err, PKGLIBDIR), "%s", err);
}

Test(loader, rejects_bad_names_before_searching)
{
	cr_assert_null(tb_plugin_load("../fake_good", err, sizeof err));
	cr_assert(strstr(err, "must match"), "%s", err);
	cr_assert_null(tb_plugin_load("Fake", err, sizeof err));
}

Test(loader, rejects_a_file_that_is_no_module)
{
	char path[] = "/tmp/tb-loader-XXXXXX";
	char file[600];
	FILE *f;

	cr_assert_not_null(mkdtemp(path));
	snprintf(file, sizeof file, "%s/junk.so", path);
	f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	cr_assert_null(tb_plugin_load_file(file, err, sizeof err));
	cr_assert(strstr(err, file) == err, "%s", err);
	cr_assert(strstr(err, ": cannot load: "), "%s", err);
	remove(file);
	rmdir(path);
}

static unsigned seen_good, seen_total;

static void count(const char *name, const char *path, void *arg)
{
	(void)arg;
	seen_total++;
	if (strcmp(name, "fake_good") == 0) {
		seen_good++;
		cr_assert(strstr(path, "/fake_good.la"), "%s", path);
	}
}

Test(loader, lists_each_module_once)
{
	tb_loader_foreach(count, NULL);
	cr_assert_eq(seen_good, 1);
	cr_assert_geq(seen_total, 9);
}
