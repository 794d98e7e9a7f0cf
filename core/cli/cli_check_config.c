/* `taskbox check-config [FILE] [--start]`: validates a config file, finds
 * each instance's plugin as serve would, and with --start starts and stops
 * each instance so its plugin validates its settings. */
#include "config.h"

#include <stdio.h>

#include "cli/cli.h"
#include "host/config_file.h"
#include "host/instance.h"
#include "host/loader.h"

/* Loads (and with start, starts and stops) each instance's plugin; prints
 * one line per failure, naming the field by its JSON path, on stderr.
 * Returns how many failed. */
static unsigned check_instances(const struct tb_config *cfg, bool start)
{
	unsigned failed = 0;

	for (size_t i = 0; i < cfg->n_instances; i++) {
		const struct tb_config_instance *ci = &cfg->instances[i];
		struct tb_plugin *plugin;
		void *handle;
		char err[1024];

		plugin = tb_plugin_load(ci->plugin, err, sizeof err);
		if (!plugin) {
			fprintf(stderr, "$.providers.%s.plugin: %s\n", ci->name,
			        err);
			failed++;
			continue;
		}
		if (tb_instance_watches_unused(ci, tb_plugin_desc(plugin), err,
		                               sizeof err))
			fprintf(stderr, "warning: %s\n", err);
		tb_plugin_release(plugin);
		if (!start)
			continue;
		if (tb_instance_start(ci->name, ci->plugin, ci->settings_json,
		                      &plugin, &handle, err, sizeof err) < 0) {
			fprintf(stderr, "$.providers.%s.settings: %s\n",
			        ci->name, err);
			failed++;
			continue;
		}
		tb_instance_stop(plugin, handle);
	}
	return failed;
}

int tb_cli_check_config(const struct tb_cli_opts *opts, const char *file)
{
	char err[8192];
	struct tb_config *cfg;
	unsigned failed;

	cfg = tb_config_load(file ? file : opts->config, err, sizeof err);
	if (!cfg) {
		fprintf(stderr, "%s\n", err);
		fprintf(stderr, "taskbox: %s: invalid config\n",
		        file           ? file
		        : opts->config ? opts->config
		                       : "config");
		return TB_EXIT_CONFIG;
	}
	if (tb_loader_init(opts->plugin_dir, err, sizeof err) < 0) {
		fprintf(stderr, "taskbox: %s\n", err);
		tb_config_free(cfg);
		return TB_EXIT_FAILURE;
	}
	failed = check_instances(cfg, opts->start);
	if (failed)
		fprintf(stderr,
		        "taskbox: %s: %u instance%s would not %s (search "
		        "path %s)\n",
		        cfg->source, failed, failed == 1 ? "" : "s",
		        opts->start ? "start" : "load", tb_loader_path());
	tb_loader_exit();
	if (failed) {
		tb_config_free(cfg);
		return TB_EXIT_PROVIDER;
	}
	printf("%s: ok: %zu instance%s, default \"%s\"%s\n", cfg->source,
	       cfg->n_instances, cfg->n_instances == 1 ? "" : "s",
	       cfg->default_name,
	       opts->start ? ", each started and stopped" : "");
	tb_config_free(cfg);
	return TB_EXIT_OK;
}
