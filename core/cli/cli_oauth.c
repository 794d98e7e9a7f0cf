/* The OAuth verifier of `taskbox serve --http`, made from the config's
 * http.oauth (docs/oauth.md). */
#include "config.h"

#include <stdio.h>

#include "cli/cli.h"
#include "host/config_file.h"
#include "transport/oauth.h"

int tb_cli_oauth_new(const struct tb_config_http *h, struct tb_oauth **out)
{
	const struct tb_config_oauth *c = h ? h->oauth : NULL;
	const char *public_url[1] = {h ? h->public_url : NULL};
	struct tb_oauth_opts o = {0};
	char err[256];

	*out = NULL;
	if (!c)
		return 0;
	o.issuer = c->issuer;
	o.jwks_uri = c->jwks_uri;
	o.audiences =
	    c->n_audience ? (const char *const *)c->audience : public_url;
	o.n_audiences = c->n_audience ? c->n_audience : 1;
	o.principal_claim = c->principal_claim;
	o.leeway_s = c->leeway_s;
	for (int i = 0; i < 3; i++)
		o.scope_names[i] = c->scopes[i];
	*out = tb_oauth_new(&o, err, sizeof err);
	if (!*out) {
		fprintf(stderr, "taskbox: $.http.oauth: %s\n", err);
		return -1;
	}
	return 0;
}
