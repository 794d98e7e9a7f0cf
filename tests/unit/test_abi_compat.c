/* Plugins built outside the host against two headers both load through the
 * real loader: fake_abi14 against the frozen 1.4 header
 * (tests/abi/provider-1.4.h), fake_abi15 against the current one. The host
 * reads nothing of the 1.4 descriptor past its struct_size (the bytes that
 * follow it there are not zero), so it sees no describe nor list; the 1.5
 * plugin's describe and list are there and answer. */
#include "config.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config_file.h"
#include "host/loader.h"
#include "host/registry.h"

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

TestSuite(abi_compat, .init = start, .fini = stop);

/* The 1.4 struct_size: the current descriptor up to describe. */
#define SIZE_1_4 offsetof(struct taskbox_provider, describe)

Test(abi_compat, the_1_4_plugin_really_has_bytes_past_its_struct_size)
{
	char file[600];
	taskbox_provider_entry_fn entry;
	const unsigned char *raw;
	void *mod, *sym;
	size_t nonzero = 0;

	/* The module's own descriptor, not the host's copy of it. */
	snprintf(file, sizeof file, "%s/fake_abi14.so", fake_dir());
	mod = dlopen(file, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(mod, "%s", dlerror());
	sym = dlsym(mod, TASKBOX_PROVIDER_ENTRY_NAME);
	cr_assert_not_null(sym, "%s", dlerror());
	memcpy(&entry, &sym, sizeof entry);
	raw = (const unsigned char *)entry();
	cr_assert_eq(((const struct taskbox_provider *)raw)->struct_size,
	             SIZE_1_4);
	for (size_t i = SIZE_1_4; i < sizeof(struct taskbox_provider); i++)
		nonzero += raw[i] != 0;
	cr_assert_gt(nonzero, 0,
	             "the bytes where describe and list would be are zero: "
	             "the test below would prove nothing");
	dlclose(mod);
}

Test(abi_compat, a_plugin_built_against_the_1_4_header_loads_without_them)
{
	struct tb_plugin *p = tb_plugin_load("fake_abi14", err, sizeof err);
	const struct taskbox_provider *d;

	cr_assert_not_null(p, "%s", err);
	d = tb_plugin_desc(p);
	cr_assert_eq(d->abi_major, 1);
	cr_assert_eq(d->abi_minor, 4);
	cr_assert_eq(d->struct_size, SIZE_1_4);
	cr_assert_str_eq(d->version, "1.4");
	cr_assert_not_null(d->ops.exec);
	cr_assert_eq(d->features, TASKBOX_FEATURE_HOST_EXEC,
	             "features lie within a 1.4 struct_size");
	cr_assert_not_null(d->read_files,
	                   "read_files lies within a 1.4 struct_size");
	cr_assert_null(d->describe, "describe lies past a 1.4 struct_size");
	cr_assert_null(d->list, "list lies past a 1.4 struct_size");
	tb_plugin_release(p);
}

struct seen {
	unsigned count;
	char owner[TASKBOX_OWNER_MAX];
	int stop;
};

static int see(void *arg, const struct taskbox_sandbox_info *info)
{
	struct seen *s = arg;

	s->count++;
	cr_assert_geq(info->struct_size, sizeof *info);
	cr_assert_str_eq(info->id, "fake-1");
	snprintf(s->owner, sizeof s->owner, "%s", info->owner);
	return s->stop;
}

Test(abi_compat, a_plugin_built_against_the_1_5_header_has_them)
{
	struct tb_plugin *p = tb_plugin_load("fake_abi15", err, sizeof err);
	const struct taskbox_provider *d;

	cr_assert_not_null(p, "%s", err);
	d = tb_plugin_desc(p);
	cr_assert_eq(d->abi_minor, TASKBOX_ABI_MINOR);
	cr_assert_eq(d->struct_size, sizeof(struct taskbox_provider));
	cr_assert_not_null(d->describe);
	cr_assert_not_null(d->list);
	tb_plugin_release(p);
}

/* Both plugins as instances of one config, started by the host. */
static void open_both(void)
{
	struct tb_config *cfg =
	    tb_config_parse("{\"default\": \"v15\", \"providers\": {"
	                    "\"v14\": {\"plugin\": \"fake_abi14\"},"
	                    "\"v15\": {\"plugin\": \"fake_abi15\"}}}",
	                    "test", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_eq(tb_registry_open(cfg, err, sizeof err), 0, "%s", err);
	tb_config_free(cfg);
}

Test(abi_compat, both_start_as_instances_and_only_the_1_5_one_describes)
{
	const struct tb_instance *v14, *v15;
	struct taskbox_sandbox_info info;
	struct seen seen = {0};
	struct taskbox_create_req req = {sizeof req, NULL, 0,
	                                 "alice@example.org"};
	char id[TASKBOX_SANDBOX_ID_MAX];
	void *conn;

	open_both();
	v14 = tb_registry_find("v14");
	v15 = tb_registry_find("v15");
	cr_assert_not_null(v14);
	cr_assert_not_null(v15);
	cr_assert_null(v14->plugin->describe);
	cr_assert_null(v14->plugin->list);
	/* A 1.5 request, longer than the 1.4 plugin knows. */
	cr_assert_eq(
	    v14->plugin->ops.create(v14->handle, &req, id, err, sizeof err),
	    TASKBOX_OK, "%s", err);
	cr_assert_str_eq(id, "fake-1");

	cr_assert_eq(v15->plugin->ops.connect(v15->handle, "fake-1", &conn, err,
	                                      sizeof err),
	             TASKBOX_OK, "%s", err);
	memset(&info, 0, sizeof info);
	info.struct_size = sizeof info;
	cr_assert_eq(v15->plugin->describe(conn, &info, err, sizeof err),
	             TASKBOX_OK, "%s", err);
	cr_assert_str_eq(info.id, "fake-1");
	cr_assert_str_eq(info.owner, "alice@example.org");
	cr_assert_eq(info.created_s, 1700000000);
	cr_assert_eq(info.expires_s, 0);
	v15->plugin->ops.close(conn);

	cr_assert_eq(
	    v15->plugin->list(v15->handle, NULL, see, &seen, err, sizeof err),
	    TASKBOX_OK, "%s", err);
	cr_assert_eq(seen.count, 1);
	cr_assert_str_eq(seen.owner, "alice@example.org");
	cr_assert_eq(
	    v15->plugin->list(v15->handle, "bob", see, &seen, err, sizeof err),
	    TASKBOX_OK, "%s", err);
	cr_assert_eq(seen.count, 1, "bob owns no sandbox");
	seen.stop = 1;
	cr_assert_eq(v15->plugin->list(v15->handle, "alice@example.org", see,
	                               &seen, err, sizeof err),
	             TASKBOX_OK,
	             "a listing its callback stops is still TASKBOX_OK");
	cr_assert_eq(seen.count, 2);
	tb_registry_close();
}
