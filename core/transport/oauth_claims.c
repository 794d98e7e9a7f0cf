/* The claims of a verified access token (RFC 9068, RFC 7519 section 4.1):
 * issuer, audience (RFC 8707), lifetime with leeway, the principal and
 * its scopes. Messages name the rule that failed and never repeat a
 * claim's value. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "transport/oauth_internal.h"

/* Whether aud (a string or a list of strings) names an accepted one. */
static bool audience_ok(const struct oauth_rules *r, const json_t *aud)
{
	size_t i;
	json_t *v;

	if (json_is_string(aud)) {
		for (size_t k = 0; k < r->n_audiences; k++)
			if (strcmp(json_string_value(aud), r->audiences[k]) ==
			    0)
				return true;
		return false;
	}
	json_array_foreach(aud, i, v) if (json_is_string(v) &&
	                                  audience_ok(r, v)) return true;
	return false;
}

/* A time claim's value into *t: false when present and not a number. */
static bool time_claim(const json_t *claims, const char *name, bool *present,
                       int64_t *t)
{
	json_t *v = json_object_get(claims, name);

	*present = v != NULL;
	if (!v)
		return true;
	if (!json_is_number(v))
		return false;
	double d = json_number_value(v);
	if (d != d || d > 9e15 || d < -9e15)
		return false;
	*t = (int64_t)d;
	return true;
}

/* Checks exp, nbf and iat at now with the leeway. */
static bool lifetime_ok(const struct oauth_rules *r, const json_t *claims,
                        int64_t now, char *why, size_t whylen)
{
	bool has_exp, has_nbf, has_iat;
	int64_t exp = 0, nbf = 0, iat = 0;

	if (!time_claim(claims, "exp", &has_exp, &exp) ||
	    !time_claim(claims, "nbf", &has_nbf, &nbf) ||
	    !time_claim(claims, "iat", &has_iat, &iat)) {
		snprintf(why, whylen,
		         "the token's exp, nbf or iat is not a number of "
		         "seconds");
		return false;
	}
	if (!has_exp) {
		snprintf(why, whylen, "the token has no expiry time (exp)");
		return false;
	}
	if (exp + r->leeway_s <= now) {
		snprintf(why, whylen, "the token has expired");
		return false;
	}
	if (has_nbf && nbf - r->leeway_s > now) {
		snprintf(why, whylen, "the token is not valid yet (nbf)");
		return false;
	}
	if (has_iat && iat - r->leeway_s > now) {
		snprintf(why, whylen,
		         "the token was issued in the future (iat)");
		return false;
	}
	return true;
}

/* Adds the bit of name[0..len) under names. */
static unsigned scope_bit(const char *name, size_t len,
                          const char *const names[3])
{
	static const unsigned bits[3] = {TB_SCOPE_READ, TB_SCOPE_RUN,
	                                 TB_SCOPE_ADMIN};
	unsigned out = 0;

	for (int i = 0; i < 3; i++) {
		const char *n =
		    names[i] ? names[i] : tb_scope_name((enum tb_scope)bits[i]);
		if (strlen(n) == len && memcmp(n, name, len) == 0)
			out |= bits[i];
	}
	return out;
}

/* The bits of a space-separated list of scope names. */
static unsigned scope_words(const char *s, const char *const names[3])
{
	unsigned bits = 0;

	while (*s) {
		size_t n = strcspn(s, " ");
		bits |= scope_bit(s, n, names);
		s += n;
		s += strspn(s, " ");
	}
	return bits;
}

unsigned oauth_claims_scopes(const json_t *claims, const char *const names[3])
{
	unsigned bits = 0;
	const char *keys[] = {"scope", "scp"};

	for (int k = 0; k < 2; k++) {
		json_t *v = json_object_get(claims, keys[k]), *e;
		size_t i;
		if (json_is_string(v))
			bits |= scope_words(json_string_value(v), names);
		json_array_foreach(v, i, e) if (json_is_string(e)) bits |=
		    scope_bit(json_string_value(e), json_string_length(e),
		              names);
	}
	return tb_scopes_close(bits);
}

/* The jti as a token id: printable ASCII without spaces, bounded; else
 * "". */
static void set_token_id(struct tb_principal *who, const json_t *claims)
{
	const char *jti = json_string_value(json_object_get(claims, "jti"));
	size_t n = jti ? strlen(jti) : 0;

	who->token_id[0] = '\0';
	if (n == 0 || n > TB_PRINCIPAL_TOKEN_ID_MAX)
		return;
	for (size_t i = 0; i < n; i++)
		if (jti[i] <= 0x20 || jti[i] >= 0x7f)
			return;
	memcpy(who->token_id, jti, n + 1);
}

bool oauth_claims_check(const struct oauth_rules *r, const json_t *claims,
                        int64_t now, struct tb_principal *who, char *why,
                        size_t whylen)
{
	const char *iss = json_string_value(json_object_get(claims, "iss"));
	const char *claim = r->principal_claim ? r->principal_claim : "sub";
	json_t *aud = json_object_get(claims, "aud");
	json_t *name;

	if (!iss || strcmp(iss, r->issuer) != 0) {
		snprintf(why, whylen,
		         "the token's issuer (iss) is not %s, the issuer this "
		         "server trusts",
		         r->issuer);
		return false;
	}
	if (!aud) {
		snprintf(why, whylen, "the token has no audience (aud)");
		return false;
	}
	if (!audience_ok(r, aud)) {
		snprintf(why, whylen,
		         "the token's audience (aud) is not this server");
		return false;
	}
	if (!lifetime_ok(r, claims, now, why, whylen))
		return false;
	name = json_object_get(claims, claim);
	if (!json_is_string(name) || json_string_length(name) == 0) {
		snprintf(why, whylen,
		         "the token's principal claim %.64s is not a non-empty "
		         "string",
		         claim);
		return false;
	}
	memset(who, 0, sizeof *who);
	if (strlen(json_string_value(name)) != json_string_length(name) ||
	    !tb_principal_set_name(who, json_string_value(name))) {
		snprintf(why, whylen,
		         "the token's principal claim %.64s is not a name (1 "
		         "to %d bytes, no control characters)",
		         claim, TB_PRINCIPAL_NAME_MAX);
		return false;
	}
	who->how = TB_AUTH_OAUTH;
	who->scopes = oauth_claims_scopes(claims, r->scope_names);
	set_token_id(who, claims);
	return true;
}
