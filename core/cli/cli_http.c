/* `taskbox serve --http` (or a config with http.listen, or a socket handed
 * over by socket activation): the HTTP transport's options from the command
 * line and the config file, and the bearer tokens from $TASKBOX_HTTP_TOKEN,
 * the sources the config names and the service manager's credential
 * http-tokens (never from the config text or the command line). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/listen_addr.h"
#include "base/log.h"
#include "cli/cli.h"
#include "host/config_file.h"
#include "transport/http.h"
#include "transport/http_policy.h"

#define TOKEN_FILE_MAX 65536
/* The systemd credential (LoadCredential=http-tokens:FILE) read as a
 * token file, from the directory the service manager names. */
#define CREDENTIAL_NAME "http-tokens"

/* Adds the tokens of a file; -1 (said) when it cannot be read. With
 * missing_ok, a file that does not exist adds nothing. */
static int tokens_from_file(const char *path, bool missing_ok, char ***v,
                            size_t *n)
{
	char text[TOKEN_FILE_MAX + 1], why[128];
	FILE *f = fopen(path, "r");
	size_t len;

	if (!f && missing_ok && errno == ENOENT)
		return 0;
	if (!f) {
		fprintf(stderr,
		        "taskbox: invalid config:\n$.http.token_file: "
		        "cannot open %s: %s\n",
		        path, strerror(errno));
		return -1;
	}
	len = fread(text, 1, TOKEN_FILE_MAX, f);
	bool bad = ferror(f) || len == TOKEN_FILE_MAX;
	fclose(f);
	text[len] = '\0';
	if (bad || strlen(text) != len) {
		fprintf(stderr,
		        "taskbox: invalid config:\n$.http.token_file: "
		        "%s is unreadable, too large or binary\n",
		        path);
		return -1;
	}
	if (tb_http_tokens_split(text, v, n, why, sizeof why) < 0) {
		fprintf(stderr,
		        "taskbox: invalid config:\n$.http.token_file: "
		        "%s\n",
		        why);
		return -1;
	}
	return 0;
}

/* Adds the tokens of an environment variable, if set, then scrubs the
 * value and removes the variable: no command the server starts (the local
 * provider's inherit its environment) sees it. */
static int tokens_from_env(const char *name, const char *what, char ***v,
                           size_t *n)
{
	char *value = getenv(name), why[128];
	int rc = 0;

	if (!value)
		return 0;
	if (tb_http_tokens_split(value, v, n, why, sizeof why) < 0) {
		fprintf(stderr, "taskbox: invalid config:\n%s ($%s): %s\n",
		        what, name, why);
		rc = -1;
	}
	memset(value, 0, strlen(value));
	unsetenv(name);
	return rc;
}

void tb_cli_http_tokens_free(struct tb_cli_http_tokens *t)
{
	for (size_t i = 0; i < t->n; i++) {
		memset(t->v[i], 0, strlen(t->v[i]));
		free(t->v[i]);
	}
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

int tb_cli_http_tokens_take(const struct tb_config_http *h,
                            struct tb_cli_http_tokens *t)
{
	t->v = NULL;
	t->n = 0;
	/* Each source is read (and its variable removed) even when an
	 * earlier one failed. */
	int a =
	    tokens_from_env("TASKBOX_HTTP_TOKEN", "the token", &t->v, &t->n);
	int b = h && h->token_env
	            ? tokens_from_env(h->token_env, "$.http.token_env", &t->v,
	                              &t->n)
	            : 0;
	int c = h && h->token_file
	            ? tokens_from_file(h->token_file, false, &t->v, &t->n)
	            : 0;
	const char *creds = getenv("CREDENTIALS_DIRECTORY");
	char path[4096];
	int d = 0;

	if (creds && creds[0] == '/') {
		snprintf(path, sizeof path, "%s/" CREDENTIAL_NAME, creds);
		d = tokens_from_file(path, true, &t->v, &t->n);
	}
	if (a < 0 || b < 0 || c < 0 || d < 0) {
		tb_cli_http_tokens_free(t);
		return -1;
	}
	return 0;
}

int tb_cli_serve_http(const struct tb_cli_opts *opts,
                      const struct tb_config_http *h,
                      const struct tb_cli_http_tokens *tokens, int listen_fd,
                      const struct tb_listen_addr *inherited)
{
	struct tb_config_http none = {0};
	struct tb_http_opts ho = {0};
	struct tb_listen_addr addr;
	char why[256], where[80];

	if (!h)
		h = &none;
	ho.listen = opts->http ? opts->http : h->listen;
	if (listen_fd > 0) {
		/* The socket is bound already: its address is the one served,
		 * and the one the rules below (token, Host) apply to. */
		tb_listen_addr_format(inherited, inherited->port, where,
		                      sizeof where);
		if (ho.listen)
			tb_log(TB_LOG_INFO,
			       "serving the inherited socket %s, not %s", where,
			       ho.listen);
		ho.listen = where;
		ho.listen_fd = listen_fd;
	}
	if (tb_listen_addr_parse(ho.listen, &addr, why, sizeof why) < 0) {
		fprintf(stderr, "taskbox: %s %s: %s\n",
		        opts->http ? "--http" : "$.http.listen", ho.listen,
		        why);
		return opts->http ? TB_EXIT_USAGE : TB_EXIT_CONFIG;
	}
	if (tokens->n == 0 && !tb_listen_addr_loopback(&addr)) {
		fprintf(stderr,
		        "taskbox: refusing to listen on %s without a token: "
		        "set $TASKBOX_HTTP_TOKEN, or $.http.token_env or "
		        "$.http.token_file in the config\n",
		        addr.addr);
		return TB_EXIT_CONFIG;
	}
	ho.path = h->path;
	ho.tokens = (const char *const *)tokens->v;
	ho.n_tokens = tokens->n;
	ho.allowed_origins = (const char *const *)h->allowed_origins;
	ho.n_allowed_origins = h->n_allowed_origins;
	ho.allowed_hosts = (const char *const *)h->allowed_hosts;
	ho.n_allowed_hosts = h->n_allowed_hosts;
	ho.session_idle_s = h->session_idle_s;
	ho.idle_timeout_s = h->idle_timeout_s;
	ho.max_connections = h->max_connections;
	ho.max_inflight = h->max_inflight;
	ho.workers = opts->workers;
	ho.tls_cert = h->tls_cert;
	ho.tls_key = h->tls_key;
	ho.test_tools = opts->test_tools;
	return tb_serve_http(&ho) == 0 ? TB_EXIT_OK : TB_EXIT_FAILURE;
}
