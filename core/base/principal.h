/* Who makes a request: a principal's name, its scopes and how it was
 * authenticated. Made at the transport's edge and passed down as a value;
 * no layer below the transport reads a header. */
#ifndef TB_PRINCIPAL_H
#define TB_PRINCIPAL_H

#include <stdbool.h>
#include <stddef.h>

/* The scopes, each including those below it: read < run < admin. */
enum tb_scope {
	TB_SCOPE_READ = 1u << 0,  /* taskbox:read: look, never change */
	TB_SCOPE_RUN = 1u << 1,   /* taskbox:run: every tool on its own */
	TB_SCOPE_ADMIN = 1u << 2, /* taskbox:admin: every principal's */
};
#define TB_SCOPES_ALL (TB_SCOPE_READ | TB_SCOPE_RUN | TB_SCOPE_ADMIN)

enum tb_auth_kind {
	TB_AUTH_STDIO,  /* the local user on stdio */
	TB_AUTH_NONE,   /* a loopback HTTP server with no token source */
	TB_AUTH_STATIC, /* a static bearer token */
	TB_AUTH_OAUTH,  /* an OAuth 2.1 access token (a JWT) */
};

#define TB_PRINCIPAL_NAME_MAX 255 /* bytes; a static token's: 64 */
#define TB_PRINCIPAL_TOKEN_ID_MAX 128

struct tb_principal {
	char name[TB_PRINCIPAL_NAME_MAX + 1];
	unsigned scopes; /* enum tb_scope bits, closed under inclusion */
	enum tb_auth_kind how;
	/* What identifies the credential in records, never the credential:
	 * a JWT's jti, a static token's principal; "" when none. */
	char token_id[TB_PRINCIPAL_TOKEN_ID_MAX + 1];
};

/* The principal of stdio and of a loopback server without tokens: "local",
 * every scope. */
void tb_principal_local(struct tb_principal *p, enum tb_auth_kind how);

/* Sets p's name (false, p unchanged, when name is not 1 to
 * TB_PRINCIPAL_NAME_MAX bytes of printable ASCII or UTF-8 without
 * control characters). */
bool tb_principal_set_name(struct tb_principal *p, const char *name);

/* Whether name is a static token's principal: 1 to 64 of A-Za-z0-9_.@- */
bool tb_principal_static_name_ok(const char *name);

/* Closes bits under inclusion: admin brings run, run brings read. */
unsigned tb_scopes_close(unsigned bits);

/* The canonical name of one scope bit ("taskbox:read", ...). */
const char *tb_scope_name(enum tb_scope s);

/* The bit of a canonical scope name, or 0. */
unsigned tb_scope_parse(const char *name, size_t len);

/* "static", "oauth", "stdio", "none". */
const char *tb_auth_kind_name(enum tb_auth_kind how);

#endif /* TB_PRINCIPAL_H */
