/* `taskbox providers`: what loads, what does not, and why. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "host/config_file.h"
#include "host/instance.h"
#include "host/loader.h"
#include "host/provider_check.h"
#include "tasks/sup_native.h"
#include "tasks/sup_upload.h"

/* Loads one candidate file, prints one line about it, unloads it. */
static void list_plugin(const char *name, const char *path, void *arg)
{
	char err[1024];
	struct tb_plugin *p = tb_plugin_load_file(path, err, sizeof err);
	const struct taskbox_provider *d;

	(void)name;
	(void)arg;
	if (!p) {
		printf("  rejected  %s\n", err);
		return;
	}
	d = tb_plugin_desc(p);
	printf("  ok        %-12s %-10s ABI %u.%u  %s\n", d->name,
	       d->version[0] ? d->version : "-", (unsigned)d->abi_major,
	       (unsigned)d->abi_minor, path);
	tb_plugin_release(p);
}

/* Ends an instance's line with the supervisor its verbs run (as
 * tb_sup_choose picks it): the host's native one (python3 where a provider
 * with HOST_EXEC has none), a copy of the static one, or python3. */
static void print_supervisor(int native, int host_exec, enum tb_sup_mode mode)
{
	const char *copy =
	    tb_sup_static_sandbox_path() ? tb_sup_static_host_path() : NULL;

	if (mode == TB_SUP_MODE_PYTHON3)
		printf("python3 (\"supervisor\": \"python3\")\n");
	else if (native)
		printf("%s\n", tb_sup_native_path());
	else if (host_exec)
		printf("python3\n");
	else if (mode == TB_SUP_MODE_STATIC && copy)
		printf("a copy of %s\n", copy);
	else if (mode == TB_SUP_MODE_STATIC)
		printf("python3 (\"static\" asked, but this taskbox has no "
		       "static supervisor)\n");
	else if (copy)
		printf("a copy of %s where it runs in the sandbox, else "
		       "python3\n",
		       copy);
	else
		printf("python3 (this taskbox has no static supervisor)\n");
}

/* Starts and stops every configured instance; returns how many failed. */
static unsigned probe_instances(const struct tb_config *cfg)
{
	unsigned failed = 0;

	for (size_t i = 0; i < cfg->n_instances; i++) {
		const struct tb_config_instance *ci = &cfg->instances[i];
		const char *tag = strcmp(ci->name, cfg->default_name) == 0
		                      ? " (default)"
		                      : "";
		struct tb_plugin *plugin;
		void *handle;
		int native;
		char err[1024];

		if (tb_instance_start(ci->name, ci->plugin, ci->settings_json,
		                      &plugin, &handle, err, sizeof err) < 0) {
			printf("  failed    %s%s: %s\n", ci->name, tag, err);
			failed++;
			continue;
		}
		native = tb_sup_native_for(tb_plugin_desc(plugin));
		printf("  ok        %s%s: plugin %s %s, ABI %u.%u, %s, ",
		       ci->name, tag, tb_plugin_desc(plugin)->name,
		       tb_plugin_desc(plugin)->version,
		       (unsigned)tb_plugin_desc(plugin)->abi_major,
		       (unsigned)tb_plugin_desc(plugin)->abi_minor,
		       tb_plugin_file(plugin));
		/* Waits are watched in the sandbox where the host cannot see
		 * its processes. */
		if (!(tb_plugin_desc(plugin)->features &
		      TASKBOX_FEATURE_HOST_PIDS))
			printf("%u watches, ", ci->watches);
		else if (tb_instance_watches_unused(ci, tb_plugin_desc(plugin),
		                                    err, sizeof err))
			printf("\"watches\" unused (it sees the processes), ");
		printf("supervisor ");
		print_supervisor(native,
		                 (tb_plugin_desc(plugin)->features &
		                  TASKBOX_FEATURE_HOST_EXEC) != 0,
		                 ci->supervisor);
		tb_instance_stop(plugin, handle);
	}
	return failed;
}

int tb_cli_providers(const struct tb_cli_opts *opts)
{
	char err[4096];
	struct tb_config *cfg;
	unsigned failed;

	cfg = tb_config_load(opts->config, err, sizeof err);
	if (!cfg) {
		fprintf(stderr, "taskbox: invalid config:\n%s\n", err);
		return TB_EXIT_CONFIG;
	}
	if (tb_loader_init(opts->plugin_dir, err, sizeof err) < 0) {
		fprintf(stderr, "taskbox: %s\n", err);
		tb_config_free(cfg);
		return TB_EXIT_FAILURE;
	}
	printf("Plugins (search path %s):\n", tb_loader_path());
	tb_loader_foreach(list_plugin, NULL);
	printf("Instances (config %s):\n", cfg->source);
	failed = probe_instances(cfg);
	fflush(stdout);
	tb_loader_exit();
	tb_config_free(cfg);
	return failed ? TB_EXIT_PROVIDER : TB_EXIT_OK;
}
