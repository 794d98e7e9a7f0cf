/* What the files of the token check share: the compact JWS (oauth_jws.c),
 * the claim rules (oauth_claims.c), the key store and its fetcher
 * (oauth_jwks.c, oauth_fetch.c). Private to core/transport/oauth*.c and
 * their unit tests. Thread-safety as stated on each. */
#ifndef TB_OAUTH_INTERNAL_H
#define TB_OAUTH_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/principal.h"

#define OAUTH_TOKEN_MAX 16384         /* bytes of a compact JWS */
#define OAUTH_DEFAULT_LEEWAY_S 60     /* exp, nbf, iat */
#define OAUTH_KID_REFETCH_S 30        /* an unknown kid's refetch, at most */
#define OAUTH_CACHE_DEFAULT_S 300     /* without Cache-Control */
#define OAUTH_CACHE_MIN_S 5           /* max-age below is raised to it */
#define OAUTH_CACHE_MAX_S (24 * 3600) /* and above lowered to it */
#define OAUTH_RETRY_S 10              /* after a failed fetch */
#define OAUTH_FETCH_TIMEOUT_S 5       /* one HTTP exchange, whole */
#define OAUTH_FETCH_MAX (1 << 20)     /* bytes of a document */

/* --- a compact JWS (oauth_jws.c; pure, any thread) --- */

struct oauth_jws {
	json_t *header;    /* the protected header, an object */
	json_t *claims;    /* the payload, an object */
	const char *alg;   /* in header */
	const char *kid;   /* in header, or NULL */
	const char *input; /* the signing input: header.payload */
	size_t input_len;  /* (borrowed from the token) */
	const char *sig64; /* the signature, base64url (borrowed) */
	size_t sig64_len;
};

/* Parses a compact JWS whose payload is a JSON object. 0, or -1 with an
 * error_description in why. The token is borrowed while j lives. */
int oauth_jws_parse(const char *token, size_t len, struct oauth_jws *j,
                    char *why, size_t whylen);
void oauth_jws_clear(struct oauth_jws *j);

/* Whether alg is one this server never accepts (none, HMAC, unknown);
 * says why. */
bool oauth_alg_refused(const char *alg, char *why, size_t whylen);

/* Verifies j's signature with jwk: the key's kty and crv (and its alg,
 * use and key_ops when given) must allow j's alg. true, or false with an
 * error_description in why. */
bool oauth_jws_verify(const struct oauth_jws *j, const json_t *jwk, char *why,
                      size_t whylen);

/* --- the claims (oauth_claims.c; pure, any thread) --- */

struct oauth_rules {
	const char *issuer;
	const char *const *audiences;
	size_t n_audiences;
	const char *principal_claim;
	int64_t leeway_s;
	const char *scope_names[3]; /* read, run, admin */
};

/* Checks claims against r at now (seconds since the epoch) and fills who.
 * true, or false with an error_description in why. */
bool oauth_claims_check(const struct oauth_rules *r, const json_t *claims,
                        int64_t now, struct tb_principal *who, char *why,
                        size_t whylen);

/* The scope bits (closed) that claims grant under names. */
unsigned oauth_claims_scopes(const json_t *claims, const char *const names[3]);

/* --- one fetch (oauth_fetch.c; any thread, blocking) --- */

struct oauth_doc {
	json_t *json;      /* the document, an object */
	int64_t max_age_s; /* from Cache-Control, or -1 when absent */
};

/* Fetches url (an object of JSON); 0, or -1 with why. stop (may be NULL)
 * aborts the transfer when it becomes non-zero. */
int oauth_fetch_json(const char *url, const int *stop, struct oauth_doc *d,
                     char *why, size_t whylen);

/* --- the issuer's keys (oauth_jwks.c) --- */

struct oauth_jwks;

enum oauth_key_result {
	OAUTH_KEY_FOUND,
	OAUTH_KEY_UNKNOWN,     /* no key has this kid, no refetch allowed */
	OAUTH_KEY_UNAVAILABLE, /* the keys cannot be had */
	OAUTH_KEY_PENDING,     /* a fetch runs; ready(arg) follows */
};

/* A store for issuer's keys at jwks_uri (NULL: discovered). Starts its
 * fetcher thread; NULL when it cannot. */
struct oauth_jwks *oauth_jwks_new(const char *issuer, const char *jwks_uri);
void oauth_jwks_free(struct oauth_jwks *s);

/* The key with this kid (a new reference in *jwk), fetching the set when
 * it is missing, stale, or lacks kid (at most once per
 * OAUTH_KID_REFETCH_S for that). With ready NULL, waits for the fetch.
 * On UNAVAILABLE why says what failed. Any thread. */
enum oauth_key_result oauth_jwks_key(struct oauth_jwks *s, const char *kid,
                                     json_t **jwk, void (*ready)(void *),
                                     void *arg, char *why, size_t whylen);

unsigned oauth_jwks_retry_after_s(struct oauth_jwks *s);
unsigned long oauth_jwks_fetches(struct oauth_jwks *s);

#endif /* TB_OAUTH_INTERNAL_H */
