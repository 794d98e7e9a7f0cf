/* The registry: instances from a config, init with the instance's
 * settings, the host services, failures that name instance and file. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config_file.h"
#include "host/loader.h"
#include "host/registry.h"

static char err[2048];

static void start(void)
{
	unsetenv("TASKBOX_PLUGIN_PATH");
	cr_assert_eq(
	    tb_loader_init(getenv("TASKBOX_FAKEPLUGIN_DIR"), err, sizeof err),
	    0, "%s", err);
}

static void stop(void)
{
	tb_loader_exit();
}

TestSuite(registry, .init = start, .fini = stop);

static struct tb_config *config(const char *text)
{
	struct tb_config *cfg = tb_config_parse(text, "test", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	return cfg;
}

Test(registry, opens_every_instance_and_the_default)
{
	struct tb_config *cfg = config(
	    "{\"default\": \"b\", \"providers\": {"
	    "\"a\": {\"plugin\": \"fake_good\"},"
	    "\"b\": {\"plugin\": \"fake_good\", \"settings\": {\"x\": 1}}}}");
	const struct tb_instance *a, *b;

	cr_assert_eq(tb_registry_open(cfg, err, sizeof err), 0, "%s", err);
	tb_config_free(cfg);
	a = tb_registry_find("a");
	b = tb_registry_find("b");
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_null(tb_registry_find("c"));
	cr_assert_eq(tb_registry_default(), b);
	cr_assert_str_eq(b->name, "b");
	cr_assert_str_eq(b->plugin->name, "fake_good");
	cr_assert_neq(a->handle, b->handle);
	tb_registry_close();
	cr_assert_null(tb_registry_find("a"));
}

Test(registry, plugin_output_comes_in_host_memory)
{
	struct tb_config *cfg = config("{\"default\": \"a\", \"providers\": "
	                               "{\"a\": {\"plugin\": \"fake_good\"}}}");
	const char *argv[] = {"echo", "hi", NULL};
	struct taskbox_exec_req req = {
	    .struct_size = sizeof req, .argv = argv, .timeout_ms = 1000};
	struct taskbox_exec_result res = {sizeof res, 0, 0, 0, 0, {0}, {0}};
	const struct tb_instance *in;
	char id[TASKBOX_SANDBOX_ID_MAX];
	void *conn;

	cr_assert_eq(tb_registry_open(cfg, err, sizeof err), 0, "%s", err);
	in = tb_registry_default();
	cr_assert_eq(
	    in->plugin->ops.create(in->handle, NULL, id, err, sizeof err),
	    TASKBOX_OK);
	cr_assert_eq(
	    in->plugin->ops.connect(in->handle, id, &conn, err, sizeof err),
	    TASKBOX_OK);
	cr_assert_eq(in->plugin->ops.exec(conn, &req, &res, err, sizeof err),
	             TASKBOX_OK);
	cr_assert_eq(res.out.len, 7);
	cr_assert(memcmp(res.out.data, "echo hi", 7) == 0);
	tb_host()->free(res.out.data);
	in->plugin->ops.close(conn);
	tb_registry_close();
	tb_config_free(cfg);
}

Test(registry, host_describes_itself)
{
	const struct taskbox_host *h = tb_host();
	void *p;

	cr_assert_eq(h->abi_major, TASKBOX_ABI_MAJOR);
	cr_assert_eq(h->abi_minor, TASKBOX_ABI_MINOR);
	cr_assert_eq(h->struct_size, sizeof *h);
	p = h->alloc(0);
	cr_assert_not_null(p, "alloc(0) must not look like a failure");
	p = h->realloc(p, 64);
	cr_assert_not_null(p);
	h->free(p);
	h->free(NULL);
	h->log(TASKBOX_LOG_DEBUG, "fake", "a line nobody sees");
}

Test(registry, init_failure_names_instance_file_and_message)
{
	struct tb_config *cfg =
	    config("{\"default\": \"ok\", \"providers\": {"
	           "\"ok\": {\"plugin\": \"fake_good\"},"
	           "\"bad\": {\"plugin\": \"fake_initfail\"}}}");

	cr_assert_eq(tb_registry_open(cfg, err, sizeof err), -1);
	cr_assert(strstr(err, "instance \"bad\": "), "%s", err);
	cr_assert(strstr(err, "/fake_initfail.la: init failed "
	                      "(TASKBOX_E_INVALID): settings.endpoint: "
	                      "required"),
	          "%s", err);
	cr_assert_null(tb_registry_find("ok"), "nothing stays open");
	cr_assert_null(tb_registry_default());
	tb_config_free(cfg);
}

Test(registry, settings_reach_init)
{
	struct tb_config *cfg =
	    config("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	           "\"fake_good\", \"settings\": {\"fail\": true}}}}");

	cr_assert_eq(tb_registry_open(cfg, err, sizeof err), -1);
	cr_assert(strstr(err, "settings.fail: unknown setting"), "%s", err);
	tb_config_free(cfg);
}

Test(registry, rejected_plugin_fails_the_open)
{
	struct tb_config *cfg =
	    config("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	           "\"fake_minor\"}}}");

	cr_assert_eq(tb_registry_open(cfg, err, sizeof err), -1);
	cr_assert(strstr(err, "instance \"a\": "), "%s", err);
	char want[64];
	snprintf(want, sizeof want, "fake_minor.la: ABI minor %d is newer",
	         TASKBOX_ABI_MINOR + 1);
	cr_assert(strstr(err, want), "%s", err);
	tb_config_free(cfg);
}

Test(registry, missing_plugin_fails_the_open)
{
	struct tb_config *cfg =
	    config("{\"default\": \"a\", \"providers\": {\"a\": {\"plugin\": "
	           "\"nonesuch\"}}}");

	cr_assert_eq(tb_registry_open(cfg, err, sizeof err), -1);
	cr_assert(strstr(err, "instance \"a\": plugin \"nonesuch\" not found"),
	          "%s", err);
	tb_config_free(cfg);
}
