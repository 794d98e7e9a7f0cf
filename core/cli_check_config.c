/* `taskbox check-config [FILE]`: validates a config file. */
#include "config.h"

#include <stdio.h>

#include "cli.h"
#include "config_file.h"

int tb_cli_check_config(const struct tb_cli_opts *opts, const char *file)
{
	char err[8192];
	struct tb_config *cfg;

	cfg = tb_config_load(file ? file : opts->config, err, sizeof err);
	if (!cfg) {
		fprintf(stderr, "%s\n", err);
		fprintf(stderr, "taskbox: %s: invalid config\n",
		        file           ? file
		        : opts->config ? opts->config
		                       : "config");
		return TB_EXIT_CONFIG;
	}
	printf("%s: ok: %zu instance%s, default \"%s\"\n", cfg->source,
	       cfg->n_instances, cfg->n_instances == 1 ? "" : "s",
	       cfg->default_name);
	tb_config_free(cfg);
	return TB_EXIT_OK;
}
