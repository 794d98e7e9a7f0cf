/* The OAuth token check's pieces: the claim rules, the algorithm and key
 * rules with tokens signed here (libjose for RSA and ECDSA, OpenSSL for
 * Ed25519), the scope names, and the config's "public_url" and "oauth". */
#include "config.h"

#include <criterion/criterion.h>
#include <jose/b64.h>
#include <jose/jwk.h>
#include <jose/jws.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "host/config_file.h"
#include "transport/oauth.h"
#include "transport/oauth_internal.h"

#define ISS "https://issuer.example"
#define AUD "https://taskbox.example/mcp"
#define NOW 1800000000

static const char *const audiences[] = {AUD};
static const struct oauth_rules rules = {
    .issuer = ISS,
    .audiences = audiences,
    .n_audiences = 1,
    .principal_claim = "sub",
    .leeway_s = 60,
};

/* Checks claims (JSON text) at NOW; the why (or "" when accepted). */
static const char *check(const char *text, struct tb_principal *who)
{
	static char why[256];
	json_t *claims = json_loads(text, 0, NULL);

	cr_assert(claims, "%s", text);
	why[0] = '\0';
	bool ok = oauth_claims_check(&rules, claims, NOW, who, why, sizeof why);
	json_decref(claims);
	cr_assert(ok == (why[0] == '\0'));
	return why;
}

#define BASE "\"iss\":\"" ISS "\",\"sub\":\"alice\",\"exp\":1800000300"

Test(oauth_claims, a_good_token_is_its_principal)
{
	struct tb_principal who;

	cr_assert_str_empty(check("{" BASE ",\"aud\":\"" AUD
	                          "\",\"jti\":\"j-1\","
	                          "\"scope\":\"openid taskbox:run\"}",
	                          &who));
	cr_assert_str_eq(who.name, "alice");
	cr_assert_eq(who.how, TB_AUTH_OAUTH);
	cr_assert_eq(who.scopes, TB_SCOPE_READ | TB_SCOPE_RUN);
	cr_assert_str_eq(who.token_id, "j-1");
	cr_assert_str_empty(
	    check("{" BASE ",\"aud\":[\"x\",\"" AUD "\"]}", &who));
	cr_assert_eq(who.scopes, 0);
	cr_assert_str_empty(who.token_id);
}

Test(oauth_claims, each_rule_says_which_failed)
{
	struct tb_principal who;

	cr_assert(strstr(check("{" BASE ",\"aud\":\"https://other\"}", &who),
	                 "audience (aud) is not this server"));
	cr_assert(strstr(check("{" BASE ",\"aud\":[\"a\",\"b\"]}", &who),
	                 "audience (aud) is not this server"));
	cr_assert(strstr(check("{" BASE "}", &who), "has no audience"));
	cr_assert(strstr(check("{\"iss\":\"" ISS "/\",\"sub\":\"a\",\"exp\":"
	                       "1800000300,\"aud\":\"" AUD "\"}",
	                       &who),
	                 "issuer (iss) is not " ISS ","));
	cr_assert(strstr(check("{\"iss\":\"" ISS
	                       "\",\"sub\":\"a\",\"aud\":\"" AUD "\"}",
	                       &who),
	                 "has no expiry time (exp)"));
	cr_assert(
	    strstr(check("{\"iss\":\"" ISS "\",\"sub\":\"a\",\"aud\":\"" AUD
	                 "\",\"exp\":\"soon\"}",
	                 &who),
	           "not a number"));
	cr_assert(strstr(check("{\"iss\":\"" ISS "\",\"aud\":\"" AUD
	                       "\",\"exp\":1800000300,\"sub\":\"\"}",
	                       &who),
	                 "principal claim sub is not a non-empty string"));
	cr_assert(strstr(check("{\"iss\":\"" ISS "\",\"aud\":\"" AUD
	                       "\",\"exp\":1800000300,\"sub\":7}",
	                       &who),
	                 "principal claim sub"));
	cr_assert(strstr(check("{\"iss\":\"" ISS "\",\"aud\":\"" AUD
	                       "\",\"exp\":1800000300,\"sub\":\"a\\u0001\"}",
	                       &who),
	                 "is not a name"));
}

Test(oauth_claims, lifetimes_have_the_leeway)
{
	struct tb_principal who;
	char text[256];
	static const struct {
		const char *claims;
		const char *why; /* "" when accepted */
	} rows[] = {
	    {"\"exp\":1800000000", ""},        /* now, in the leeway */
	    {"\"exp\":1799999941", ""},        /* 59 s ago */
	    {"\"exp\":1799999940", "expired"}, /* 60 s ago */
	    {"\"exp\":1800000300,\"nbf\":1800000060", ""},
	    {"\"exp\":1800000300,\"nbf\":1800000061", "not valid yet (nbf)"},
	    {"\"exp\":1800000300,\"iat\":1800000060", ""},
	    {"\"exp\":1800000300,\"iat\":1800000061", "issued in the future"},
	};

	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		snprintf(text, sizeof text,
		         "{\"iss\":\"" ISS "\",\"sub\":\"a\",\"aud\":\"" AUD
		         "\",%s}",
		         rows[i].claims);
		const char *why = check(text, &who);
		if (!*rows[i].why)
			cr_assert_str_empty(why, "%s: %s", rows[i].claims, why);
		else
			cr_assert(strstr(why, rows[i].why), "%s: %s",
			          rows[i].claims, why);
	}
}

Test(oauth_claims, scopes_map_through_the_configured_names)
{
	const char *const mine[3] = {"tb.read", "tb.run", "tb.admin"};
	const char *const dflt[3] = {NULL, NULL, NULL};
	json_t *c;

	c = json_loads("{\"scp\":[\"tb.read\",\"other\"]}", 0, NULL);
	cr_assert_eq(oauth_claims_scopes(c, mine), TB_SCOPE_READ);
	cr_assert_eq(oauth_claims_scopes(c, dflt), 0);
	json_decref(c);
	c = json_loads("{\"scope\":\"a  tb.admin b\"}", 0, NULL);
	cr_assert_eq(oauth_claims_scopes(c, mine), TB_SCOPES_ALL);
	json_decref(c);
	c = json_loads("{\"scp\":\"taskbox:read taskbox:runx\"}", 0, NULL);
	cr_assert_eq(oauth_claims_scopes(c, dflt), TB_SCOPE_READ);
	json_decref(c);
	c = json_loads("{\"scope\":\"taskbox:admi\"}", 0, NULL);
	cr_assert_eq(oauth_claims_scopes(c, dflt), 0);
	json_decref(c);
}

/* --- signatures --- */

/* An RSA key made once for these tests: generating one under valgrind
 * takes seconds. */
static const char rsa_jwk[] =
    "{\"kty\":\"RSA\",\"n\":\"tqvPPidVcnq431pN8iutc2kmo9iNRV7v29eNlC0"
    "H2XdXbDYubz6RKb6dngaxJORgNkqI1JEbAGS5XtWxVlqLpmDqrzZyV1HG6zTKM75"
    "pfyYT76czJmHJeM7I91Qn_gx6MfqRq_W_N82EsPoLT1Q7LZkk4wA2dC4NCSSzSys"
    "dvF2yRcSld7GvuDlVOf2HfFbkpMo-tH8KX-u5u_EkOUz-9ouvZ3ZKiF8HawTseiM"
    "r0plDAW1Ceqw0XQQ27ge5CIttrUa-Qi0GgUfnP_bPU9ALXp3yj012YzGKvMVVwG0"
    "t5Mi112RIXeD5KWe3ot99ANqDbrrQt2J0nZP50qaA7undcw\",\"e\":\"AQAB\""
    ",\"d\":\"D8PUJvEOFsswmVYZ1ASg-4zfoNRXnN0MplR8C4W3X7VE_jnO2Br2PDw"
    "PLkw1jZGIHCdil7XONsJ6nQykOWenFbzXhDeWtqKAIFx19vE_-ZE3tz8e0vktghe"
    "WkIHa0boR8a5GVCjpT8-U3BE4WKhUUyMcY9ro2C4BQgDA2IPoFRF7qJnovhjiau9"
    "jRQr8TQAl-6pacDwJrBobedoq8qMLkp_qZ2YTkDzUhxg1BZDwM5zSljw-8IRayVI"
    "zQSI5dGTBIQzEM9E_dA3BV4CVhuJX8DlCAoRWm0jBnpnM2A7mvu99o2RjovSoZjW"
    "iPCdPKVFS5EgpavObAn8_Qogc8dblAQ\",\"p\":\"49_xjqCfDhSI2UibGQcu1I"
    "2s4huPZigX8KdVeK6aUsXi8k_NGG3f_lKWNr_-m34iTkeTHFK0yYaI_lgUyWngr4"
    "w70IbpcIJ86AVl785pCakNZ1RxaTPAq1440rWIZw5usyRcU9EAIhly3aDp7_BSon"
    "DJ-_HZcrvS9wxvyAajDHE\",\"q\":\"zTeWMlvjLIKoPLz1vh5qMN5ANV_LWIjD"
    "31nf43Lj_5O2_qmQE8OTdYu51sdFQNNVACywRiq20LD1w3qLQpoKco0KsN-WuCd5"
    "SCI37sDKorl-Vo43P4iLcgvWORdlvG88HKO7PEZBurBz7R4h8D_xa2uETqf6b1Hm"
    "lso5pIquyiM\",\"dp\":\"b560ji6zeowodHaSMnJISCmVs7PYTCv7fhAZV-H_C"
    "eiQwCzCw-KeQ89kcTEeoD_qwflhYBBLKiPSWvP-SqKoQpUof352PnxMfsKWKh8ra"
    "GX8gM7mNqf5Cng-0UfGpuR06R84cn3_2LQqhdFahgNsFtG0vsq6vu6t6gGXh51op"
    "KE\",\"dq\":\"Dn981vXy6LQaWqAm5FWVvvoUozCvVwPigqcA0DrPrMCszvT_vs"
    "W0ZzuF14ygceH8QVTm5y4hWEEIO9UufXgQgONB_Bjvtvbi9JumQ_HO3wwnxsmpUY"
    "29_EKl0ca7Y0Kgho1yruFvx1ar-faFA0ohLiucX0oywSaSGdkTlXJOwu0\",\"qi"
    "\":\"yLOxZoXDD3lz201z2OMfK8_Ta2t3hyRm6qcQ3AgTnlz3GqzkLksbd-vdqe0"
    "Py6JNMW1X6W3yOlwSVxmBPZPrzDIMamlFISbaUctKJxsbzaMj5ZPjbmy2ejk5lfR"
    "v4MVQcfa5oba0PjhkQPb-B48vf6op4L-0fpWM7LrVU6JizqA\"}";

/* A key pair for alg ("RS256", "PS256", "ES256"...): RSA the one above,
 * others new from libjose. */
static json_t *jose_key(const char *alg)
{
	json_t *jwk;

	if (alg[0] == 'R' || alg[0] == 'P') {
		jwk = json_loads(rsa_jwk, 0, NULL);
		cr_assert(jwk);
		json_object_set_new(jwk, "alg", json_string(alg));
		return jwk;
	}
	jwk = json_pack("{s:s}", "alg", alg);
	cr_assert(jose_jwk_gen(NULL, jwk));
	return jwk;
}

/* The public half of jwk with kid, without "alg" (the key type decides). */
static json_t *public_of(const json_t *jwk)
{
	json_t *pub = json_deep_copy(jwk);

	cr_assert(jose_jwk_pub(NULL, pub));
	json_object_del(pub, "alg");
	json_object_del(pub, "key_ops");
	return pub;
}

static char *b64(const char *s, size_t n)
{
	size_t len = jose_b64_enc_buf(s, n, NULL, 0);
	char *out = calloc(1, len + 1);

	jose_b64_enc_buf(s, n, out, len);
	return out;
}

/* A compact JWS of claims with header {alg, kid} signed by jwk with
 * libjose (alg as jwk's). */
static char *sign_jose(const json_t *jwk, const char *alg, const char *claims)
{
	char hdr[128], *h64, *p64, *out;
	json_t *jws, *sig;

	snprintf(hdr, sizeof hdr, "{\"alg\":\"%s\",\"kid\":\"k1\"}", alg);
	h64 = b64(hdr, strlen(hdr));
	p64 = b64(claims, strlen(claims));
	jws = json_pack("{s:s}", "payload", p64);
	sig = json_pack("{s:s}", "protected", h64);
	cr_assert(jose_jws_sig(NULL, jws, sig, jwk));
	const char *s64 = json_string_value(json_object_get(jws, "signature"));
	cr_assert(s64);
	out = malloc(strlen(h64) + strlen(p64) + strlen(s64) + 3);
	sprintf(out, "%s.%s.%s", h64, p64, s64);
	json_decref(jws);
	json_decref(sig);
	free(h64);
	free(p64);
	return out;
}

/* Verifies token with pub; the why, or "" when it verifies. */
static const char *verify(const char *token, const json_t *pub)
{
	static char why[256];
	struct oauth_jws j;

	why[0] = '\0';
	if (oauth_jws_parse(token, strlen(token), &j, why, sizeof why) < 0)
		return why;
	if (!oauth_alg_refused(j.alg, why, sizeof why))
		oauth_jws_verify(&j, pub, why, sizeof why);
	oauth_jws_clear(&j);
	return why;
}

static const char claims[] = "{\"iss\":\"" ISS "\",\"sub\":\"alice\"}";

Test(oauth_jws, rsa_and_ecdsa_verify_with_their_keys_only)
{
	const char *algs[] = {"RS256", "PS256", "ES256", "ES384"};
	json_t *keys[4], *pubs[4];

	for (int i = 0; i < 4; i++) {
		keys[i] = jose_key(algs[i]);
		pubs[i] = public_of(keys[i]);
	}
	for (int i = 0; i < 4; i++) {
		char *tok = sign_jose(keys[i], algs[i], claims);
		cr_assert_str_empty(verify(tok, pubs[i]), "%s: %s", algs[i],
		                    verify(tok, pubs[i]));
		/* Another key type (RS256 and PS256 share the RSA key). */
		for (int k = 0; k < 4; k++)
			if (k / 2 != i / 2)
				cr_assert_str_not_empty(verify(tok, pubs[k]));
		/* A changed payload no longer verifies. */
		char *dot = strchr(tok, '.') + 1;
		*dot = *dot == 'e' ? 'f' : 'e';
		cr_assert(strstr(verify(tok, pubs[i]), "does not verify") ||
		          strstr(verify(tok, pubs[i]), "not a signed JWT"));
		free(tok);
	}
	/* RS256 with a key that says PS256: the key's alg decides. */
	json_object_set_new(pubs[0], "alg", json_string("PS256"));
	char *tok = sign_jose(keys[0], "RS256", claims);
	cr_assert(strstr(verify(tok, pubs[0]), "does not fit"));
	free(tok);
	for (int i = 0; i < 4; i++) {
		json_decref(keys[i]);
		json_decref(pubs[i]);
	}
}

Test(oauth_jws, ed25519_verifies_through_openssl)
{
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *key = NULL;
	unsigned char raw[32], sig[64];
	size_t raw_len = sizeof raw, sig_len = sizeof sig;
	char hdr[] = "{\"alg\":\"EdDSA\",\"kid\":\"k1\"}", *input, token[1024];

	cr_assert(EVP_PKEY_keygen_init(pc) == 1 &&
	          EVP_PKEY_keygen(pc, &key) == 1);
	cr_assert(EVP_PKEY_get_raw_public_key(key, raw, &raw_len) == 1);
	char *x = b64((const char *)raw, raw_len), *h64 = b64(hdr, strlen(hdr)),
	     *p64 = b64(claims, strlen(claims));
	input = malloc(strlen(h64) + strlen(p64) + 2);
	sprintf(input, "%s.%s", h64, p64);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	cr_assert(EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1);
	cr_assert(EVP_DigestSign(ctx, sig, &sig_len,
	                         (const unsigned char *)input,
	                         strlen(input)) == 1);
	char *s64 = b64((const char *)sig, sig_len);
	snprintf(token, sizeof token, "%s.%s", input, s64);
	json_t *pub =
	    json_pack("{s:s,s:s,s:s}", "kty", "OKP", "crv", "Ed25519", "x", x);
	cr_assert_str_empty(verify(token, pub), "%s", verify(token, pub));
	/* The same key type named by an EC token: refused. */
	json_t *ec_key = jose_key("ES256"), *ec = public_of(ec_key);
	cr_assert(strstr(verify(token, ec), "does not fit"));
	/* Another Ed25519 key: refused. */
	json_object_set_new(
	    pub, "x",
	    json_string("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"));
	cr_assert(strstr(verify(token, pub), "does not verify"));
	json_decref(ec);
	json_decref(ec_key);
	json_decref(pub);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	EVP_PKEY_CTX_free(pc);
	free(s64);
	free(input);
	free(x);
	free(h64);
	free(p64);
}

Test(oauth_jws, none_hmac_and_junk_are_refused)
{
	json_t *rsa = jose_key("RS256"), *pub = public_of(rsa);
	json_t *oct = json_pack("{s:s}", "alg", "HS256");
	char *tok;

	/* HS256 whose secret is the RSA key's public modulus. */
	json_object_set(oct, "k", json_object_get(pub, "n"));
	json_object_set_new(oct, "kty", json_string("oct"));
	tok = sign_jose(oct, "HS256", claims);
	cr_assert(strstr(verify(tok, pub), "HMAC"));
	free(tok);
	cr_assert(strstr(verify("eyJhbGciOiJub25lIiwia2lkIjoiazEifQ."
	                        "eyJzdWIiOiJhIn0.",
	                        pub),
	                 "alg none"));
	cr_assert(strstr(verify("abc", pub), "not a signed JWT"));
	cr_assert(strstr(verify("a.b.c.d", pub), "not a signed JWT"));
	cr_assert(strstr(verify("e30.e30.", pub), "names no algorithm"));
	/* {"alg":"ES256","crit":["exp"]} */
	cr_assert(strstr(verify("eyJhbGciOiJFUzI1NiIsImNyaXQiOlsiZXhwIl19."
	                        "e30.AA",
	                        pub),
	                 "critical"));
	json_decref(oct);
	json_decref(pub);
	json_decref(rsa);
}

/* --- the verifier without its issuer --- */

Test(oauth, an_unreachable_issuer_is_unavailable_not_refused)
{
	const char *const aud[] = {AUD};
	struct tb_oauth_opts o = {.issuer = "http://127.0.0.1:9",
	                          .audiences = aud,
	                          .n_audiences = 1,
	                          .leeway_s = -1};
	char err[256], why[256];
	struct tb_principal who;
	json_t *key = jose_key("ES256");
	char *tok = sign_jose(key, "ES256", claims);
	struct tb_oauth *oa = tb_oauth_new(&o, err, sizeof err);

	cr_assert(oa, "%s", err);
	cr_assert_eq(tb_oauth_check(oa, tok, strlen(tok), &who, why, sizeof why,
	                            NULL, NULL),
	             TB_OAUTH_UNAVAILABLE);
	cr_assert(strstr(why, "127.0.0.1:9"), "%s", why);
	cr_assert_geq(tb_oauth_retry_after_s(oa), 1);
	/* Within the retry window: no new fetch. */
	unsigned long fetches = tb_oauth_fetches(oa);
	cr_assert_eq(tb_oauth_check(oa, tok, strlen(tok), &who, why, sizeof why,
	                            NULL, NULL),
	             TB_OAUTH_UNAVAILABLE);
	cr_assert_eq(tb_oauth_fetches(oa), fetches);
	tb_oauth_free(oa);
	free(tok);
	json_decref(key);
	o.issuer = "http://issuer.example";
	cr_assert_null(tb_oauth_new(&o, err, sizeof err));
	cr_assert(strstr(err, "https"));
}

/* --- the config --- */

static char *config_err(const char *http)
{
	static char err[2048];
	char text[2048];

	snprintf(text, sizeof text,
	         "{\"default\":\"local\",\"providers\":{\"local\":{\"plugin\":"
	         "\"local\"}},"
	         "\"http\":%s}",
	         http);
	err[0] = '\0';
	struct tb_config *cfg =
	    tb_config_parse(text, "t.json", err, sizeof err);
	tb_config_free(cfg);
	return err;
}

Test(oauth_config, keys_are_validated_by_name)
{
	cr_assert_str_empty(config_err(
	    "{\"public_url\":\"https://tb.example/mcp\",\"oauth\":{"
	    "\"issuer\":\"https://id.example\",\"jwks_uri\":"
	    "\"https://id.example/keys\",\"audience\":[\"api://tb\"],"
	    "\"principal_claim\":\"email\",\"leeway_s\":30,\"scopes\":{"
	    "\"read\":\"tb.read\",\"run\":\"tb.run\",\"admin\":\"tb.admin\"},"
	    "\"challenge_scope\":\"tb.read tb.run\"}}"));
	cr_assert(strstr(config_err("{\"oauth\":{\"issuer\":\"https://i\"}}"),
	                 "$.http.public_url: required with $.http.oauth"));
	cr_assert(strstr(config_err("{\"public_url\":\"ftp://x/mcp\"}"),
	                 "$.http.public_url: must be an absolute http"));
	cr_assert(strstr(config_err("{\"public_url\":\"https://t/mcp\","
	                            "\"oauth\":{}}"),
	                 "$.http.oauth.issuer: required"));
	cr_assert(
	    strstr(config_err("{\"public_url\":\"https://t/mcp\","
	                      "\"oauth\":{\"issuer\":\"http://id.example\"}}"),
	           "$.http.oauth.issuer: must be an https URL"));
	const char *e = config_err(
	    "{\"public_url\":\"https://t/mcp\",\"oauth\":{\"issuer\":"
	    "\"http://127.0.0.1:4444\",\"audience\":[],\"leeway_s\":-1,"
	    "\"principal_claim\":\"\",\"scopes\":{\"read\":\"a\",\"run\":\"a\","
	    "\"write\":\"b\"},\"challenge_scope\":\"a  b\",\"jwks\":1}}");
	cr_assert(strstr(e, "$.http.oauth.audience: must be a list of 1 to 16"),
	          "%s", e);
	cr_assert(
	    strstr(e, "$.http.oauth.leeway_s: must be an integer 0..600"));
	cr_assert(strstr(e, "$.http.oauth.principal_claim: must be the name"));
	cr_assert(strstr(e, "$.http.oauth.scopes.run: must differ from "
	                    "$.http.oauth.scopes.read"));
	cr_assert(strstr(e, "$.http.oauth.scopes.write"), "%s", e);
	cr_assert(
	    strstr(e, "$.http.oauth.challenge_scope: must be scope names"));
	cr_assert(strstr(e, "$.http.oauth.jwks"), "%s", e);
	cr_assert_null(strstr(e, "$.http.oauth.issuer"), "%s", e);
}
