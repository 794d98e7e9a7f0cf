/* `taskbox serve --http` (or a config with http.listen): the HTTP
 * transport's options from the command line and the config file, and the
 * bearer tokens from $TASKBOX_HTTP_TOKEN and the sources the config names
 * (never from the config text or the command line). */
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
#include "transport/http_tokens.h"
#include "transport/oauth.h"

#define TOKEN_FILE_MAX 65536
/* The systemd credential (LoadCredential=http-tokens:FILE) read as a
 * token file, from the directory the service manager names. */
#define CREDENTIAL_NAME "http-tokens"

/* Adds the credentials of a token source's text; -1 (said, naming what,
 * never a token) when malformed or when it names no token at all. */
static int parse_source(const char *text, const char *what,
                        struct tb_http_credentials *c)
{
	char why[160];
	size_t before = c->n;

	if (tb_http_credentials_parse(c, text, why, sizeof why) < 0) {
		fprintf(stderr, "taskbox: invalid config:\n%s: %s\n", what,
		        why);
		return -1;
	}
	if (c->n == before) {
		fprintf(stderr,
		        "taskbox: invalid config:\n%s: names no token (a "
		        "token source that is configured must give at least "
		        "one)\n",
		        what);
		return -1;
	}
	return 0;
}

/* Adds the credentials of a file; -1 (said) when it cannot be read. With
 * missing_ok, a file that does not exist adds nothing. */
static int tokens_from_file(const char *path, bool missing_ok,
                            struct tb_http_credentials *c)
{
	char text[TOKEN_FILE_MAX + 1], what[600];
	FILE *f = fopen(path, "r");
	size_t len;
	int rc;

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
		rc = -1;
	} else {
		snprintf(what, sizeof what, "$.http.token_file (%s)", path);
		rc = parse_source(text, what, c);
	}
	memset(text, 0, sizeof text);
	return rc;
}

/* Adds the credentials of an environment variable, then scrubs the value
 * and removes the variable: no command the server starts (the local
 * provider's inherit its environment) sees it. required: an unset
 * variable is an error too. */
static int tokens_from_env(const char *name, const char *what, bool required,
                           struct tb_http_credentials *c)
{
	char *value = getenv(name), label[160];
	int rc;

	if (!value) {
		if (!required)
			return 0;
		fprintf(stderr,
		        "taskbox: invalid config:\n%s: $%s is not set (a "
		        "token source that is configured must give at least "
		        "one token)\n",
		        what, name);
		return -1;
	}
	snprintf(label, sizeof label, "%s ($%s)", what, name);
	rc = parse_source(value, label, c);
	memset(value, 0, strlen(value));
	unsetenv(name);
	return rc;
}

void tb_cli_http_tokens_free(struct tb_cli_http_tokens *t)
{
	tb_http_credentials_free(&t->c);
}

int tb_cli_http_tokens_take(const struct tb_config_http *h,
                            struct tb_cli_http_tokens *t)
{
	t->c = (struct tb_http_credentials){NULL, 0};
	/* Each source is read (and its variable removed) even when an
	 * earlier one failed. */
	int a =
	    tokens_from_env("TASKBOX_HTTP_TOKEN", "the token", false, &t->c);
	int b =
	    h && h->token_env
	        ? tokens_from_env(h->token_env, "$.http.token_env", true, &t->c)
	        : 0;
	int c = h && h->token_file
	            ? tokens_from_file(h->token_file, false, &t->c)
	            : 0;
	const char *creds = getenv("CREDENTIALS_DIRECTORY");
	char path[4096];
	int d = 0;

	if (creds && creds[0] == '/') {
		snprintf(path, sizeof path, "%s/" CREDENTIAL_NAME, creds);
		d = tokens_from_file(path, true, &t->c);
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
	struct tb_oauth *oauth = NULL;
	char why[256], where[80];
	int rc;

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
	if (tokens->c.n == 0 && !h->oauth && !tb_listen_addr_loopback(&addr)) {
		fprintf(stderr,
		        "taskbox: refusing to listen on %s without a token: "
		        "set $TASKBOX_HTTP_TOKEN, or $.http.token_env, "
		        "$.http.token_file or $.http.oauth in the config\n",
		        addr.addr);
		return TB_EXIT_CONFIG;
	}
	ho.path = h->path;
	ho.credentials = tokens->c.v;
	ho.n_credentials = tokens->c.n;
	ho.allowed_origins = (const char *const *)h->allowed_origins;
	ho.n_allowed_origins = h->n_allowed_origins;
	ho.allowed_hosts = (const char *const *)h->allowed_hosts;
	ho.n_allowed_hosts = h->n_allowed_hosts;
	ho.session_idle_s = h->session_idle_s;
	ho.idle_timeout_s = h->idle_timeout_s;
	ho.header_timeout_s = h->header_timeout_s;
	ho.body_timeout_s = h->body_timeout_s;
	ho.max_unauthenticated = h->max_unauthenticated;
	ho.max_connections = h->max_connections;
	ho.max_inflight = h->max_inflight;
	ho.answer_budget = (size_t)h->answer_budget_mib << 20;
	ho.workers = opts->workers;
	ho.tls_cert = h->tls_cert;
	ho.tls_key = h->tls_key;
	ho.test_tools = opts->test_tools;
	if (tb_cli_oauth_new(h, &oauth) < 0)
		return TB_EXIT_CONFIG;
	if (oauth) {
		ho.oauth = oauth;
		ho.public_url = h->public_url;
		ho.issuer = h->oauth->issuer;
		for (int i = 0; i < 3; i++)
			ho.scope_names[i] = h->oauth->scopes[i];
		ho.challenge_scope = h->oauth->challenge_scope;
	}
	rc = tb_serve_http(&ho) == 0 ? TB_EXIT_OK : TB_EXIT_FAILURE;
	tb_oauth_free(oauth);
	return rc;
}
