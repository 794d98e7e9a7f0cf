/* The OAuth 2.1 resource server's token check (docs/oauth.md): a bearer
 * token that is a JWT signed by the configured issuer, for this server, in
 * its lifetime, becomes a principal. The issuer's keys (its JWKS) are
 * fetched off the caller's thread, on first need, and cached.
 *
 * Thread-safety: tb_oauth_new and tb_oauth_free are called once each, by
 * one thread, with no check in progress; every other function may be
 * called from any thread at once. */
#ifndef TB_OAUTH_H
#define TB_OAUTH_H

#include <stddef.h>

#include "base/principal.h"

struct tb_oauth;

struct tb_oauth_opts {
	const char *issuer;   /* required: compared with iss exactly */
	const char *jwks_uri; /* NULL: from the issuer's metadata */
	/* The accepted audiences (at least one): a token's aud must name
	 * one of them. */
	const char *const *audiences;
	size_t n_audiences;
	const char *principal_claim; /* NULL: "sub" */
	int leeway_s;                /* < 0: 60 */
	/* The issuer's names for taskbox:read, taskbox:run, taskbox:admin
	 * (each NULL: the taskbox name). */
	const char *scope_names[3];
};

enum tb_oauth_verdict {
	TB_OAUTH_OK,          /* *who is the token's principal */
	TB_OAUTH_REFUSED,     /* why says which rule failed */
	TB_OAUTH_UNAVAILABLE, /* the issuer's keys cannot be had now */
	TB_OAUTH_PENDING,     /* a fetch is under way; ready(arg) follows */
};

/* A verifier for o (every string copied). Starts no thread and fetches
 * nothing yet. NULL with why in err when o is not usable. Call it before
 * any other thread uses libcurl (it initialises libcurl). */
struct tb_oauth *tb_oauth_new(const struct tb_oauth_opts *o, char *err,
                              size_t errlen);

/* Stops the fetch under way (if any) and frees oa. A ready callback not
 * called yet is never called. */
void tb_oauth_free(struct tb_oauth *oa);

/* Checks token (len bytes, borrowed for the call). OK: *who is set (name
 * from the principal claim, scopes, how TB_AUTH_OAUTH, token_id the jti).
 * REFUSED: why holds an error_description naming the rule, never any part
 * of the token. UNAVAILABLE: why says what failed (for the log and the
 * answer). PENDING (only when ready is not NULL): the issuer's keys are
 * being fetched; ready(arg) is called once, on the fetcher's thread, when
 * that fetch ends, and the caller checks the token again. With ready NULL
 * the call waits for the fetch instead (at most the fetch's time-out). */
enum tb_oauth_verdict tb_oauth_check(struct tb_oauth *oa, const char *token,
                                     size_t len, struct tb_principal *who,
                                     char *why, size_t whylen,
                                     void (*ready)(void *arg), void *arg);

/* Seconds a client should wait after UNAVAILABLE (Retry-After), >= 1. */
unsigned tb_oauth_retry_after_s(struct tb_oauth *oa);

/* How many fetches of the issuer's keys (and metadata) were made. */
unsigned long tb_oauth_fetches(struct tb_oauth *oa);

#endif /* TB_OAUTH_H */
