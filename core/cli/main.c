/* taskbox: the command line and `serve`, the stdio MCP server. */
#include "config.h"

#include <ltdl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/audit.h"
#include "base/listen_addr.h"
#include "cli/cli.h"
#include "host/config_file.h"
#include "host/loader.h"
#include "base/log.h"
#include "cli/modules.h"
#include "host/registry.h"
#include "transport/sd_daemon.h"
#include "transport/server.h"

static const char *const subcommands[] = {"serve", "providers", "check-config",
                                          "help"};

/* The parsed command line. */
struct cmdline {
	struct tb_cli_opts opts;
	const char *subcommand;
	const char *arg;   /* the one positional after the subcommand */
	bool help;         /* --help */
	bool version;      /* --version */
	bool serve_only;   /* an option only serve takes was given */
	bool check_only;   /* an option only check-config takes was given */
	const char *level; /* --log-level */
};

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Says what is wrong with the command line; returns TB_EXIT_USAGE. */
static int usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "taskbox: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'taskbox --help'.\n");
	return TB_EXIT_USAGE;
}

static int parse_workers(const char *text, unsigned *out)
{
	char *end;
	long n = strtol(text, &end, 10);

	if (*text == '\0' || *end != '\0' || n < 1 || n > 256)
		return -1;
	*out = (unsigned)n;
	return 0;
}

/* Takes an option's value from "--opt=value" or the next argument. */
static const char *option_value(int argc, char **argv, int *i, const char *eq)
{
	if (eq)
		return eq + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

/* Returns TB_EXIT_OK or TB_EXIT_USAGE (after saying why). */
static int parse(int argc, char **argv, struct cmdline *cl)
{
	bool options_done = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *v;
		size_t len;

		if (options_done || a[0] != '-' || a[1] == '\0') {
			if (!cl->subcommand) {
				cl->subcommand = a;
			} else if (!cl->arg) {
				cl->arg = a;
			} else {
				return usage("unexpected argument \"%s\"", a);
			}
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options_done = true;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			cl->help = true;
			continue;
		}
		if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
			cl->version = true;
			continue;
		}
		if (strcmp(a, "--test-tools") == 0) {
			cl->opts.test_tools = true;
			cl->serve_only = true;
			continue;
		}
		if (strcmp(a, "--start") == 0) {
			cl->opts.start = true;
			cl->check_only = true;
			continue;
		}
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
#define IS(name) (len == strlen(name) && strncmp(a, name, len) == 0)
		if (!IS("--config") && !IS("--plugin-dir") &&
		    !IS("--log-level") && !IS("--workers") && !IS("--http"))
			return usage("unknown option \"%s\"", a);
		v = option_value(argc, argv, &i, eq);
		if (!v || !*v)
			return usage("option \"%s\" needs a value", a);
		if (IS("--config")) {
			cl->opts.config = v;
		} else if (IS("--plugin-dir")) {
			cl->opts.plugin_dir = v;
		} else if (IS("--http")) {
			struct tb_listen_addr addr;
			char why[160];
			if (tb_listen_addr_parse(v, &addr, why, sizeof why) < 0)
				return usage("--http %s: %s", v, why);
			cl->opts.http = v;
			cl->serve_only = true;
		} else if (IS("--log-level")) {
			if (tb_log_parse_level(v) < 0)
				return usage("--log-level must be error, warn, "
				             "info or debug, not \"%s\"",
				             v);
			cl->level = v;
		} else {
			if (parse_workers(v, &cl->opts.workers) < 0)
				return usage("--workers must be an integer "
				             "1..256, not \"%s\"",
				             v);
			cl->serve_only = true;
		}
#undef IS
	}
	return TB_EXIT_OK;
}

static bool known_subcommand(const char *name)
{
	for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
		if (strcmp(subcommands[i], name) == 0)
			return true;
	return false;
}

/* `taskbox serve`. */
static int serve(const struct tb_cli_opts *opts)
{
	char err[4096];
	struct tb_config *cfg;
	struct tb_cli_http_tokens tokens = {0};
	struct tb_listen_addr inherited;
	bool http;
	int rc = TB_EXIT_FAILURE, listen_fd;

	cfg = tb_config_load(opts->config, err, sizeof err);
	if (!cfg) {
		fprintf(stderr, "taskbox: invalid config:\n%s\n", err);
		return TB_EXIT_CONFIG;
	}
	/* A socket handed over (LISTEN_FDS) means HTTP on it. Its variables
	 * and the tokens leave the environment before a plugin loads. */
	listen_fd = tb_sd_listen_fd(&inherited, err, sizeof err);
	if (listen_fd < 0) {
		fprintf(stderr, "taskbox: %s\n", err);
		goto out_config;
	}
	http = listen_fd > 0 || opts->http || (cfg->http && cfg->http->listen);
	if (http && tb_cli_http_tokens_take(cfg->http, &tokens) < 0) {
		rc = TB_EXIT_CONFIG;
		goto out_config;
	}
	if (cfg->audit_path && tb_audit_open(cfg->audit_path, cfg->audit_reads,
	                                     err, sizeof err) < 0) {
		fprintf(stderr, "taskbox: invalid config:\n$.audit.path: %s\n",
		        err);
		rc = TB_EXIT_CONFIG;
		goto out_config;
	}
	if (tb_loader_init(opts->plugin_dir, err, sizeof err) < 0) {
		tb_log(TB_LOG_ERROR, "%s", err);
		goto out_config;
	}
	if (tb_registry_open(cfg, err, sizeof err) < 0) {
		tb_log(TB_LOG_ERROR, "%s", err);
		rc = TB_EXIT_PROVIDER;
		goto out_loader;
	}
	if (tb_modules_init(cfg, opts->test_tools) < 0) {
		/* said why */
	} else if (http) {
		rc = tb_cli_serve_http(opts, cfg->http, &tokens, listen_fd,
		                       &inherited);
	} else {
		struct tb_serve_opts so = {
		    .in_fd = STDIN_FILENO,
		    .out_fd = STDOUT_FILENO,
		    .workers = opts->workers,
		    .test_tools = opts->test_tools,
		};
		rc = tb_serve(&so) == 0 ? TB_EXIT_OK : TB_EXIT_FAILURE;
	}
	tb_modules_fini();
	tb_registry_close();
out_loader:
	tb_loader_exit();
out_config:
	tb_audit_close();
	tb_cli_http_tokens_free(&tokens);
	tb_config_free(cfg);
	return rc;
}

int main(int argc, char **argv)
{
	struct cmdline cl = {0};
	const char *tt = getenv("TASKBOX_TEST_TOOLS");
	bool explicit_sub;
	int rc;

	rc = parse(argc, argv, &cl);
	if (rc != TB_EXIT_OK)
		return rc;
	explicit_sub = cl.subcommand != NULL;
	if (!cl.subcommand)
		cl.subcommand = "serve";
	if (!known_subcommand(cl.subcommand))
		return usage("no subcommand \"%s\"", cl.subcommand);
	if (cl.version) {
		printf("taskbox %s (provider ABI %d.%d)\n", PACKAGE_VERSION,
		       TASKBOX_ABI_MAJOR, TASKBOX_ABI_MINOR);
		return TB_EXIT_OK;
	}
	if (strcmp(cl.subcommand, "help") == 0)
		return tb_cli_help(stdout, cl.arg);
	if (cl.help)
		return tb_cli_help(stdout, explicit_sub ? cl.subcommand : NULL);
	if (cl.level)
		tb_log_set_level(
		    (enum tb_log_level)tb_log_parse_level(cl.level));
	if (tt && strcmp(tt, "1") == 0)
		cl.opts.test_tools = true;
	if (cl.serve_only && strcmp(cl.subcommand, "serve") != 0)
		return usage("--workers, --http and --test-tools are options "
		             "of serve, not of %s",
		             cl.subcommand);
	if (cl.check_only && strcmp(cl.subcommand, "check-config") != 0)
		return usage("--start is an option of check-config, not of %s",
		             cl.subcommand);
	if (cl.arg && strcmp(cl.subcommand, "check-config") != 0)
		return usage("unexpected argument \"%s\"", cl.arg);

	tb_loader_set_builtin(lt_preloaded_symbols);
	if (strcmp(cl.subcommand, "providers") == 0)
		return tb_cli_providers(&cl.opts);
	if (strcmp(cl.subcommand, "check-config") == 0)
		return tb_cli_check_config(&cl.opts, cl.arg);
	return serve(&cl.opts);
}
