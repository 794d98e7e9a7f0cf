/* The command line's help texts. */
#include "config.h"

#include <string.h>

#include "cli/cli.h"

static const char overview[] =
    "Usage: taskbox [SUBCOMMAND] [OPTIONS]\n"
    "\n"
    "An MCP server that runs background shell tasks in sandboxes, on stdio\n"
    "(one client) or Streamable HTTP (many, with bearer tokens). Sandboxes\n"
    "come from provider plugins: local (this machine, optionally under\n"
    "bubblewrap), docker (a Docker Engine API), e2b (cloud sandboxes) and\n"
    "k8s (Pods in a Kubernetes cluster). It also runs as a service: the\n"
    "systemd units taskbox.socket and taskbox.service (socket activation),\n"
    "a container image, or replicas in a cluster.\n"
    "\n"
    "Subcommands:\n"
    "  serve               serve MCP on stdin/stdout (the default), or HTTP\n"
    "  providers           list the plugins found and the configured "
    "instances\n"
    "  check-config [FILE] validate a config file\n"
    "  help [SUBCOMMAND]   show this help or a subcommand's\n"
    "\n"
    "Options (any subcommand):\n"
    "  --config FILE       the config file (else $TASKBOX_CONFIG, else\n"
    "                      $XDG_CONFIG_HOME/taskbox/config.json, else the\n"
    "                      built-in default: one \"local\" instance)\n"
    "  --plugin-dir DIR    look for plugins in DIR first, then in\n"
    "                      $TASKBOX_PLUGIN_PATH (colon-separated), the\n"
    "                      plugins built into taskbox and " PKGLIBDIR "\n"
    "  --log-level LEVEL   error, warn, info or debug (default: $TASKBOX_LOG,"
    "\n"
    "                      else warn); logs go to stderr\n"
    "  -h, --help          show help and exit\n"
    "  -V, --version       show the version and exit\n"
    "\n"
    "Exit codes:\n"
    "  0  success\n"
    "  1  runtime failure\n"
    "  2  usage error\n"
    "  3  config missing, unreadable or invalid\n"
    "  4  a configured provider instance failed to load\n";

static const char serve_help[] =
    "Usage: taskbox [serve] [OPTIONS]\n"
    "\n"
    "Serves MCP (newline-delimited JSON-RPC 2.0) on stdin and stdout until\n"
    "stdin closes or SIGTERM/SIGINT; with --http (or http.listen in the\n"
    "config, or a listening socket handed over by systemd or another\n"
    "supervisor: LISTEN_FDS), Streamable HTTP until SIGTERM/SIGINT, telling\n"
    "a service manager when it is ready (NOTIFY_SOCKET). Loads the config\n"
    "and every provider instance it names first.\n"
    "\n"
    "Options:\n"
    "  --config FILE, --plugin-dir DIR, --log-level LEVEL  as for taskbox\n"
    "  --workers N         threads serving tools/call, 1..256 (default: the\n"
    "                      server's choice)\n"
    "  --test-tools        also list the tools meant for tests (also\n"
    "                      $TASKBOX_TEST_TOOLS=1)\n"
    "  --http [ADDR:]PORT  serve Streamable HTTP at http://ADDR:PORT/mcp\n"
    "                      (ADDR 127.0.0.1 by default, [::1] for IPv6, PORT\n"
    "                      0 any free port); bearer tokens from\n"
    "                      $TASKBOX_HTTP_TOKEN (comma-separated), the\n"
    "                      config's token_env and token_file, and the\n"
    "                      systemd credential $CREDENTIALS_DIRECTORY/\n"
    "                      http-tokens\n"
    "\n"
    "Exit codes: 0 served until the end, 1 could not serve, 2 usage error,\n"
    "3 config invalid, 4 a provider instance failed to load.\n";

static const char providers_help[] =
    "Usage: taskbox providers [OPTIONS]\n"
    "\n"
    "Lists every plugin along the search path (name, version, ABI, file, or\n"
    "why it was rejected), then every configured instance, initialised with\n"
    "its settings (or why it failed).\n"
    "\n"
    "Options: --config FILE, --plugin-dir DIR, --log-level LEVEL\n"
    "\n"
    "Exit codes: 0 every configured instance loaded, 3 config invalid,\n"
    "4 a configured instance failed to load, 1 another failure.\n";

static const char check_config_help[] =
    "Usage: taskbox check-config [FILE] [--start] [OPTIONS]\n"
    "\n"
    "Validates FILE (else the config serve would use: --config FILE,\n"
    "$TASKBOX_CONFIG, $XDG_CONFIG_HOME/taskbox/config.json, the built-in\n"
    "default) and names every bad field by its JSON path and the rule it\n"
    "breaks, one per line on stderr. Then finds each instance's plugin\n"
    "along the search path and checks its ABI, as serve would.\n"
    "\n"
    "  --start   also start and stop each instance, so each plugin\n"
    "            validates its settings (and reaches what they name)\n"
    "\n"
    "Options: --config FILE, --plugin-dir DIR, --log-level LEVEL\n"
    "\n"
    "Exit codes: 0 valid, 3 invalid or unreadable, 4 a plugin is missing,\n"
    "is rejected or (with --start) fails to start, 2 usage error.\n";

static const char help_help[] = "Usage: taskbox help [SUBCOMMAND]\n"
                                "\n"
                                "Shows the overview or a subcommand's help.\n";

int tb_cli_help(FILE *out, const char *subcommand)
{
	static const struct {
		const char *name;
		const char *text;
	} pages[] = {
	    {"serve", serve_help},
	    {"providers", providers_help},
	    {"check-config", check_config_help},
	    {"help", help_help},
	};

	if (!subcommand) {
		fputs(overview, out);
		return TB_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
		if (strcmp(pages[i].name, subcommand) == 0) {
			fputs(pages[i].text, out);
			return TB_EXIT_OK;
		}
	}
	fprintf(stderr, "taskbox: no subcommand \"%s\"; see taskbox --help\n",
	        subcommand);
	return TB_EXIT_USAGE;
}
