/* tb_oauth (oauth.h): a token's checks in order, each refusal naming its
 * rule: the JWS's form, its algorithm, the issuer's key by kid, the
 * signature, then the claims. Claims are read only once the signature
 * holds. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/crypto_lib.h"
#include "base/curl_lib.h"
#include "transport/jose_lib.h"
#include "transport/oauth.h"
#include "base/http_url.h"
#include "transport/oauth_internal.h"

struct tb_oauth {
	struct oauth_rules rules;
	char **strings; /* every copied string, freed at the end */
	size_t n_strings;
	struct oauth_jwks *jwks;
};

/* A copy of s kept in oa->strings; NULL for NULL or out of memory (then
 * *failed). */
static char *keep(struct tb_oauth *oa, const char *s, bool *failed)
{
	char *copy;

	if (!s)
		return NULL;
	copy = strdup(s);
	if (!copy) {
		*failed = true;
		return NULL;
	}
	oa->strings[oa->n_strings++] = copy;
	return copy;
}

struct tb_oauth *tb_oauth_new(const struct tb_oauth_opts *o, char *err,
                              size_t errlen)
{
	struct tb_oauth *oa;
	const char **aud;
	bool failed = false;

	if (!o->issuer || !*o->issuer || o->n_audiences == 0) {
		snprintf(err, errlen,
		         "oauth: an issuer and an audience are "
		         "required");
		return NULL;
	}
	if (tb_curl_load(err, errlen) < 0 || tb_jose_load(err, errlen) < 0 ||
	    tb_crypto_load(err, errlen) < 0)
		return NULL;
	if (!tb_url_https_or_loopback(o->issuer) ||
	    (o->jwks_uri && !tb_url_https_or_loopback(o->jwks_uri))) {
		snprintf(err, errlen,
		         "oauth: the issuer and jwks_uri must be https URLs "
		         "(or http to a loopback address)");
		return NULL;
	}
	if (tb_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "oauth: libcurl did not initialise");
		return NULL;
	}
	oa = calloc(1, sizeof *oa);
	aud = calloc(o->n_audiences, sizeof *aud);
	if (oa)
		oa->strings = calloc(o->n_audiences + 6, sizeof *oa->strings);
	if (!oa || !aud || !oa->strings)
		goto nomem;
	oa->rules.issuer = keep(oa, o->issuer, &failed);
	oa->rules.principal_claim =
	    keep(oa, o->principal_claim ? o->principal_claim : "sub", &failed);
	oa->rules.leeway_s =
	    o->leeway_s < 0 ? OAUTH_DEFAULT_LEEWAY_S : o->leeway_s;
	for (int i = 0; i < 3; i++)
		oa->rules.scope_names[i] = keep(oa, o->scope_names[i], &failed);
	for (size_t i = 0; i < o->n_audiences; i++)
		aud[i] = keep(oa, o->audiences[i], &failed);
	oa->rules.audiences = aud;
	oa->rules.n_audiences = o->n_audiences;
	aud = NULL;
	if (failed)
		goto nomem;
	oa->jwks = oauth_jwks_new(o->issuer, o->jwks_uri);
	if (!oa->jwks)
		goto nomem;
	return oa;
nomem:
	free(aud);
	tb_oauth_free(oa);
	snprintf(err, errlen, "oauth: out of memory");
	return NULL;
}

void tb_oauth_free(struct tb_oauth *oa)
{
	if (!oa)
		return;
	oauth_jwks_free(oa->jwks);
	for (size_t i = 0; i < oa->n_strings; i++)
		free(oa->strings[i]);
	free(oa->strings);
	free((void *)oa->rules.audiences);
	free(oa);
}

enum tb_oauth_verdict tb_oauth_check(struct tb_oauth *oa, const char *token,
                                     size_t len, struct tb_principal *who,
                                     char *why, size_t whylen,
                                     void (*ready)(void *arg), void *arg)
{
	enum tb_oauth_verdict v = TB_OAUTH_REFUSED;
	struct oauth_jws j;
	json_t *jwk = NULL;

	if (oauth_jws_parse(token, len, &j, why, whylen) < 0)
		return TB_OAUTH_REFUSED;
	if (oauth_alg_refused(j.alg, why, whylen))
		goto out;
	if (!j.kid) {
		snprintf(why, whylen,
		         "the token's header names no key of the issuer (kid)");
		goto out;
	}
	switch (
	    oauth_jwks_key(oa->jwks, j.kid, &jwk, ready, arg, why, whylen)) {
	case OAUTH_KEY_FOUND:
		break;
	case OAUTH_KEY_UNKNOWN:
		snprintf(why, whylen, "no key of the issuer has this kid");
		goto out;
	case OAUTH_KEY_UNAVAILABLE:
		v = TB_OAUTH_UNAVAILABLE;
		goto out;
	case OAUTH_KEY_PENDING:
		v = TB_OAUTH_PENDING;
		goto out;
	}
	if (!oauth_jws_verify(&j, jwk, why, whylen))
		goto out;
	if (oauth_claims_check(&oa->rules, j.claims, (int64_t)time(NULL), who,
	                       why, whylen))
		v = TB_OAUTH_OK;
out:
	json_decref(jwk);
	oauth_jws_clear(&j);
	return v;
}

unsigned tb_oauth_retry_after_s(struct tb_oauth *oa)
{
	return oauth_jwks_retry_after_s(oa->jwks);
}

unsigned long tb_oauth_fetches(struct tb_oauth *oa)
{
	return oauth_jwks_fetches(oa->jwks);
}
