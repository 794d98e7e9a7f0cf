/* Static bearer tokens and their principals: the token sources' text
 * parsed into credentials, and a presented token matched against them in
 * constant time. */
#ifndef TB_HTTP_TOKENS_H
#define TB_HTTP_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/principal.h"

/* A static token and whom it authenticates. */
struct tb_http_credential {
	char *token; /* visible ASCII, owned */
	struct tb_principal who;
};

struct tb_http_credentials {
	struct tb_http_credential *v;
	size_t n;
};

/* Appends the credentials of a token source's text to c. A line holds one
 * token alone (several may be separated by commas: each is "operator",
 * every scope), or "TOKEN PRINCIPAL [SCOPE ...]" separated by spaces or
 * tabs (a principal is 1 to 64 of A-Za-z0-9_.@-; scopes are taskbox:read,
 * taskbox:run or taskbox:admin, each including the ones before it; none
 * listed: taskbox:run). '#' starts a comment; blank lines are skipped.
 * Returns 0, or -1 with the rule and the line number in why (never a
 * token): a malformed line, a token seen before (in c too), or out of
 * memory. */
int tb_http_credentials_parse(struct tb_http_credentials *c, const char *text,
                              char *why, size_t whylen);

/* Scrubs and frees every token. */
void tb_http_credentials_free(struct tb_http_credentials *c);

/* The token of an Authorization header value "Bearer T" (scheme in any
 * case, blanks around T dropped): sets *tok and *len, or returns false
 * when the header is absent, of another scheme or empty. */
bool tb_http_bearer(const char *header, const char **tok, size_t *len);

/* The credential whose token equals tok (len bytes), or NULL. Every
 * token is compared whole, in a time that depends on the tokens' lengths
 * only. */
const struct tb_http_credential *
tb_http_credential_find(const struct tb_http_credential *v, size_t n,
                        const char *tok, size_t len);

/* Whether given (glen bytes) equals token, in a time that depends on the
 * token's length only. */
bool tb_http_token_equal(const char *given, size_t glen, const char *token);

#endif /* TB_HTTP_TOKENS_H */
