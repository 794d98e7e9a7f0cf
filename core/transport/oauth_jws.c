/* A compact JWS (RFC 7515) and its signature: parsed here, verified by
 * libjose (RSA and ECDSA) or by OpenSSL's one-shot EdDSA verify (Ed25519
 * keys, which libjose 11 lacks). The key decides which algorithms it
 * serves (RFC 8725 section 3.1): never the token's alg alone. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/crypto_lib.h"
#include "transport/jose_lib.h"
#include "transport/oauth_internal.h"

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    "0123456789-_";

/* Decodes base64url s[0..n) as a JSON object; NULL when it is not one. */
static json_t *decode_object(const char *s, size_t n)
{
	size_t len = tb_jose.b64_dec_buf(s, n, NULL, 0);
	json_t *obj = NULL;
	char *buf;

	if (len == SIZE_MAX || len == 0)
		return NULL;
	buf = malloc(len);
	if (!buf)
		return NULL;
	if (tb_jose.b64_dec_buf(s, n, buf, len) == len)
		obj = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	free(buf);
	if (obj && !json_is_object(obj)) {
		json_decref(obj);
		obj = NULL;
	}
	return obj;
}

void oauth_jws_clear(struct oauth_jws *j)
{
	json_decref(j->header);
	json_decref(j->claims);
	memset(j, 0, sizeof *j);
}

int oauth_jws_parse(const char *token, size_t len, struct oauth_jws *j,
                    char *why, size_t whylen)
{
	const char *dot1, *dot2;
	json_t *crit;

	memset(j, 0, sizeof *j);
	if (tb_jose_load(why, whylen) < 0)
		return -1;
	if (len == 0 || len > OAUTH_TOKEN_MAX)
		goto malformed;
	dot1 = memchr(token, '.', len);
	dot2 = dot1 ? memchr(dot1 + 1, '.', len - (dot1 + 1 - token)) : NULL;
	if (!dot2)
		goto malformed;
	for (size_t i = 0; i < len; i++)
		if (token[i] != '.' && !memchr(b64url, token[i], 64))
			goto malformed;
	if (memchr(dot2 + 1, '.', len - (dot2 + 1 - token)))
		goto malformed;
	j->header = decode_object(token, dot1 - token);
	j->claims = decode_object(dot1 + 1, dot2 - dot1 - 1);
	if (!j->header || !j->claims)
		goto malformed;
	j->alg = json_string_value(json_object_get(j->header, "alg"));
	j->kid = json_string_value(json_object_get(j->header, "kid"));
	j->input = token;
	j->input_len = dot2 - token;
	j->sig64 = dot2 + 1;
	j->sig64_len = len - (dot2 + 1 - token);
	if (!j->alg) {
		snprintf(why, whylen, "the token's header names no algorithm");
		goto fail;
	}
	crit = json_object_get(j->header, "crit");
	if (crit) {
		/* RFC 7515 4.1.11: no extension is understood here. */
		snprintf(why, whylen,
		         "the token's header has critical extensions (crit), "
		         "which this server does not understand");
		goto fail;
	}
	if (json_object_get(j->header, "kid") && !j->kid) {
		snprintf(why, whylen,
		         "the token's key id (kid) is not a string");
		goto fail;
	}
	return 0;
malformed:
	snprintf(why, whylen,
	         "the token is not a signed JWT (three base64url parts, a "
	         "JSON header and JSON claims)");
fail:
	oauth_jws_clear(j);
	return -1;
}

static const char *const rsa_algs[] = {"RS256", "RS384", "RS512", "PS256",
                                       "PS384", "PS512", NULL};

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

bool oauth_alg_refused(const char *alg, char *why, size_t whylen)
{
	static const char *const ok[] = {"ES256", "ES384", "ES512", "EdDSA",
	                                 NULL};

	if (strcmp(alg, "none") == 0) {
		snprintf(why, whylen,
		         "the token is not signed (alg none is refused)");
		return true;
	}
	if (alg[0] == 'H' && alg[1] == 'S') {
		snprintf(why, whylen,
		         "the token's algorithm is HMAC (%.8s), which is "
		         "refused: only the issuer's public keys are trusted",
		         alg);
		return true;
	}
	if (!in_list(alg, rsa_algs) && !in_list(alg, ok)) {
		snprintf(why, whylen,
		         "the token's algorithm is not one this server accepts "
		         "(RS256, RS384, RS512, PS256, PS384, PS512, ES256, "
		         "ES384, ES512, EdDSA)");
		return true;
	}
	return false;
}

/* Whether jwk's type (and its own alg, use, key_ops) allow alg. */
static bool key_fits(const json_t *jwk, const char *alg)
{
	const char *kty = json_string_value(json_object_get(jwk, "kty"));
	const char *crv = json_string_value(json_object_get(jwk, "crv"));
	const char *kalg = json_string_value(json_object_get(jwk, "alg"));
	const char *use = json_string_value(json_object_get(jwk, "use"));
	json_t *ops = json_object_get(jwk, "key_ops");
	static const struct {
		const char *crv, *alg;
	} curves[] = {{"P-256", "ES256"},
	              {"P-384", "ES384"},
	              {"P-521", "ES512"},
	              {"Ed25519", "EdDSA"}};

	if (!kty || (kalg && strcmp(kalg, alg) != 0) ||
	    (use && strcmp(use, "sig") != 0))
		return false;
	if (ops) {
		bool verify = false;
		size_t i;
		json_t *op;
		json_array_foreach(ops, i, op) verify |=
		    json_is_string(op) &&
		    strcmp(json_string_value(op), "verify") == 0;
		if (!verify)
			return false;
	}
	if (strcmp(kty, "RSA") == 0)
		return in_list(alg, rsa_algs);
	if (strcmp(kty, "EC") != 0 && strcmp(kty, "OKP") != 0)
		return false;
	for (size_t i = 0; crv && i < sizeof curves / sizeof *curves; i++)
		if (strcmp(crv, curves[i].crv) == 0)
			return strcmp(alg, curves[i].alg) == 0 &&
			       (strcmp(kty, "OKP") == 0) ==
			           (strcmp(alg, "EdDSA") == 0);
	return false;
}

/* Decodes base64url s[0..n) into a new buffer of *len bytes; NULL when
 * malformed or out of memory. */
static unsigned char *decode_bytes(const char *s, size_t n, size_t *len)
{
	unsigned char *buf;

	*len = tb_jose.b64_dec_buf(s, n, NULL, 0);
	if (*len == SIZE_MAX || *len == 0)
		return NULL;
	buf = malloc(*len);
	if (buf && tb_jose.b64_dec_buf(s, n, buf, *len) != *len) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* Ed25519 (RFC 8037): OpenSSL's one-shot verify over the signing input. */
static bool verify_eddsa(const struct oauth_jws *j, const json_t *jwk)
{
	const char *x = json_string_value(json_object_get(jwk, "x"));
	unsigned char *pub = NULL, *sig = NULL;
	size_t pub_len = 0, sig_len = 0;
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *ctx = NULL;
	bool ok = false;

	if (tb_crypto_load(NULL, 0) < 0)
		return false;
	if (!x)
		goto out;
	pub = decode_bytes(x, strlen(x), &pub_len);
	sig = decode_bytes(j->sig64, j->sig64_len, &sig_len);
	if (!pub || pub_len != 32 || !sig || sig_len != 64)
		goto out;
	key = tb_crypto.PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub,
	                                        pub_len);
	ctx = tb_crypto.MD_CTX_new();
	if (!key || !ctx ||
	    tb_crypto.DigestVerifyInit(ctx, NULL, NULL, NULL, key) != 1)
		goto out;
	ok = tb_crypto.DigestVerify(ctx, sig, sig_len,
	                            (const unsigned char *)j->input,
	                            j->input_len) == 1;
out:
	tb_crypto.MD_CTX_free(ctx);
	tb_crypto.PKEY_free(key);
	free(sig);
	free(pub);
	return ok;
}

/* RSA and ECDSA: libjose's verify of the flattened JWS. Keys of RSA
 * under 2048 bits are refused first (RFC 7518 3.3). */
static bool verify_jose(const struct oauth_jws *j, const json_t *jwk)
{
	const char *dot = memchr(j->input, '.', j->input_len);
	const char *n = json_string_value(json_object_get(jwk, "n"));
	json_t *jws;
	bool ok;

	if (n && strlen(n) * 6 / 8 < 256)
		return false;
	jws = json_pack("{s:s%,s:s%,s:s%}", "protected", j->input,
	                (size_t)(dot - j->input), "payload", dot + 1,
	                (size_t)(j->input + j->input_len - dot - 1),
	                "signature", j->sig64, j->sig64_len);
	if (!jws)
		return false;
	ok = tb_jose.jws_ver(NULL, jws, NULL, jwk, false);
	json_decref(jws);
	return ok;
}

bool oauth_jws_verify(const struct oauth_jws *j, const json_t *jwk, char *why,
                      size_t whylen)
{
	bool ok;

	if (!key_fits(jwk, j->alg)) {
		snprintf(why, whylen,
		         "the token's algorithm does not fit the type of the "
		         "issuer's key with this kid");
		return false;
	}
	ok = strcmp(j->alg, "EdDSA") == 0 ? verify_eddsa(j, jwk)
	                                  : verify_jose(j, jwk);
	if (!ok)
		snprintf(why, whylen, "the signature does not verify");
	return ok;
}
