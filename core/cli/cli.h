/* The command line: options shared by the subcommands, exit codes. */
#ifndef TB_CLI_H
#define TB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "transport/http_tokens.h"

enum tb_exit {
	TB_EXIT_OK = 0,
	TB_EXIT_FAILURE = 1,  /* a runtime failure */
	TB_EXIT_USAGE = 2,    /* bad command line */
	TB_EXIT_CONFIG = 3,   /* the config is missing, unreadable or invalid */
	TB_EXIT_PROVIDER = 4, /* a configured provider instance did not load */
};

struct tb_cli_opts {
	const char *config;     /* --config FILE, or NULL */
	const char *plugin_dir; /* --plugin-dir DIR, or NULL */
	const char *http;       /* --http [ADDR:]PORT, or NULL */
	unsigned workers;       /* --workers N; 0 = the server's default */
	bool test_tools;        /* --test-tools or $TASKBOX_TEST_TOOLS=1 */
	bool start;             /* check-config --start */
};

/* Prints the help of subcommand (NULL: the overview) to out. Returns
 * TB_EXIT_OK, or TB_EXIT_USAGE when there is no such subcommand. */
int tb_cli_help(FILE *out, const char *subcommand);

/* `taskbox providers`: lists the plugins along the search path and the
 * configured instances, loaded or not and why. */
int tb_cli_providers(const struct tb_cli_opts *opts);

/* `taskbox check-config [FILE] [--start]`: validates FILE, else the config
 * that serve would use, and finds each instance's plugin along the search
 * path; with --start also starts and stops each instance. */
int tb_cli_check_config(const struct tb_cli_opts *opts, const char *file);

struct tb_config_http;

/* The HTTP transport's static tokens and their principals. */
struct tb_cli_http_tokens {
	struct tb_http_credentials c;
};

/* Reads the tokens of $TASKBOX_HTTP_TOKEN, of h's token_env and
 * token_file (h may be NULL) and of $CREDENTIALS_DIRECTORY/http-tokens when
 * that file exists (a systemd credential), and removes those variables from the
 * environment, value scrubbed, so that no command the server starts
 * inherits them: call it before anything starts a thread. -1 (said on
 * stderr, naming the source and line, never a token) when a source is
 * unreadable, malformed, names a token twice, or gives no token at all
 * (token_env naming an unset variable too): a token source configured
 * and empty never leaves the server open. */
int tb_cli_http_tokens_take(const struct tb_config_http *h,
                            struct tb_cli_http_tokens *t);
void tb_cli_http_tokens_free(struct tb_cli_http_tokens *t);

struct tb_oauth;

/* The verifier of h's oauth section into *out (NULL when h has none).
 * Returns 0, or -1 after saying why on stderr. */
int tb_cli_oauth_new(const struct tb_config_http *h, struct tb_oauth **out);

struct tb_listen_addr;

/* `taskbox serve` over HTTP: on the inherited socket listen_fd (bound to
 * *inherited) when listen_fd > 0, else on --http, else on h->listen (h may
 * be NULL), guarded by tokens. Returns an exit code (TB_EXIT_CONFIG when no
 * token guards a non-loopback address). */
int tb_cli_serve_http(const struct tb_cli_opts *opts,
                      const struct tb_config_http *h,
                      const struct tb_cli_http_tokens *tokens, int listen_fd,
                      const struct tb_listen_addr *inherited);

#endif /* TB_CLI_H */
