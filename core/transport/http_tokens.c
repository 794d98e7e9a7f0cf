/* The static tokens of http_tokens.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transport/http_tokens.h"

/* A token, a principal and the three scopes, with room to spare. */
#define FIELDS_MAX 8

bool tb_http_token_equal(const char *given, size_t glen, const char *token)
{
	size_t tlen = strlen(token);
	unsigned char diff = (unsigned char)(glen != tlen);

	for (size_t i = 0; i < tlen; i++) {
		unsigned char g = i < glen ? (unsigned char)given[i] : 0;
		diff |= (unsigned char)(g ^ (unsigned char)token[i]);
	}
	return diff == 0;
}

bool tb_http_bearer(const char *header, const char **tok, size_t *len)
{
	if (!header || strncasecmp(header, "Bearer ", 7) != 0)
		return false;
	header += 7;
	while (*header == ' ' || *header == '\t')
		header++;
	size_t n = strlen(header);
	while (n > 0 && (header[n - 1] == ' ' || header[n - 1] == '\t'))
		n--;
	*tok = header;
	*len = n;
	return n > 0;
}

const struct tb_http_credential *
tb_http_credential_find(const struct tb_http_credential *v, size_t n,
                        const char *tok, size_t len)
{
	const struct tb_http_credential *found = NULL;

	for (size_t i = 0; i < n; i++) {
		bool eq = tb_http_token_equal(tok, len, v[i].token);
		found = eq && !found ? &v[i] : found;
	}
	return found;
}

void tb_http_credentials_free(struct tb_http_credentials *c)
{
	for (size_t i = 0; i < c->n; i++) {
		memset(c->v[i].token, 0, strlen(c->v[i].token));
		free(c->v[i].token);
	}
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

/* One field of a line: start and length. */
struct field {
	const char *s;
	size_t len;
};

static bool visible(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return false;
	return true;
}

/* Whether c holds tok already (compared whole; a config-time check). */
static bool seen(const struct tb_http_credentials *c, const char *tok,
                 size_t len)
{
	return tb_http_credential_find(c->v, c->n, tok, len) != NULL;
}

static int add(struct tb_http_credentials *c, const char *tok, size_t len,
               const struct tb_principal *who)
{
	struct tb_http_credential *grown =
	    realloc(c->v, (c->n + 1) * sizeof *c->v);

	if (!grown)
		return -1;
	c->v = grown;
	c->v[c->n].token = strndup(tok, len);
	if (!c->v[c->n].token)
		return -1;
	c->v[c->n].who = *who;
	c->n++;
	return 0;
}

/* A line of tokens alone, separated by commas (blanks around each
 * dropped), each "operator" with every scope. */
static int parse_alone(struct tb_http_credentials *c, const char *s, size_t len,
                       unsigned line, char *why, size_t whylen)
{
	struct tb_principal op = {.scopes = TB_SCOPES_ALL,
	                          .how = TB_AUTH_STATIC};
	const char *p = s, *end = s + len;

	strcpy(op.name, "operator");
	strcpy(op.token_id, "operator");
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *a = p, *b = comma ? comma : end;
		p = b + (comma ? 1 : 0);
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (a == b)
			continue;
		if (!visible(a, (size_t)(b - a))) {
			snprintf(why, whylen,
			         "line %u: a token must be visible ASCII "
			         "characters (no spaces)",
			         line);
			return -1;
		}
		if (seen(c, a, (size_t)(b - a))) {
			snprintf(why, whylen,
			         "line %u: a token given before is given again",
			         line);
			return -1;
		}
		if (add(c, a, (size_t)(b - a), &op) < 0) {
			snprintf(why, whylen, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* A line "TOKEN PRINCIPAL [SCOPE ...]". */
static int parse_named(struct tb_http_credentials *c, const struct field *f,
                       size_t nf, unsigned line, char *why, size_t whylen)
{
	struct tb_principal who = {.how = TB_AUTH_STATIC};
	char name[65];

	if (f[1].len >= sizeof name) {
		snprintf(why, whylen,
		         "line %u: a principal is 1 to 64 of A-Za-z0-9_.@-",
		         line);
		return -1;
	}
	memcpy(name, f[1].s, f[1].len);
	name[f[1].len] = '\0';
	if (!tb_principal_static_name_ok(name)) {
		snprintf(why, whylen,
		         "line %u: a principal is 1 to 64 of A-Za-z0-9_.@-",
		         line);
		return -1;
	}
	for (size_t i = 2; i < nf; i++) {
		unsigned bit = tb_scope_parse(f[i].s, f[i].len);
		if (!bit) {
			snprintf(why, whylen,
			         "line %u: field %zu: a scope is taskbox:read, "
			         "taskbox:run or taskbox:admin",
			         line, i + 1);
			return -1;
		}
		who.scopes |= bit;
	}
	who.scopes = tb_scopes_close(nf > 2 ? who.scopes : TB_SCOPE_RUN);
	strcpy(who.name, name);
	strcpy(who.token_id, name);
	if (seen(c, f[0].s, f[0].len)) {
		snprintf(why, whylen,
		         "line %u: a token given before is given again", line);
		return -1;
	}
	if (add(c, f[0].s, f[0].len, &who) < 0) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	return 0;
}

/* Splits one line (its comment cut) into fields; -1 with why when a field
 * holds a byte that is not visible ASCII or there are too many. */
static int split_line(const char *s, size_t len, struct field *f, size_t *nf,
                      unsigned line, char *why, size_t whylen)
{
	const char *end = s + len;

	*nf = 0;
	while (s < end) {
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		const char *start = s;
		while (s < end && *s != ' ' && *s != '\t')
			s++;
		if (s == start)
			break;
		if (*nf == FIELDS_MAX) {
			snprintf(why, whylen,
			         "line %u: too many fields (a token, a "
			         "principal and its scopes)",
			         line);
			return -1;
		}
		if (!visible(start, (size_t)(s - start))) {
			snprintf(why, whylen,
			         "line %u: a field holds a byte that is not "
			         "visible ASCII",
			         line);
			return -1;
		}
		f[(*nf)++] = (struct field){start, (size_t)(s - start)};
	}
	return 0;
}

int tb_http_credentials_parse(struct tb_http_credentials *c, const char *text,
                              char *why, size_t whylen)
{
	struct field f[FIELDS_MAX];
	unsigned line = 0;
	size_t nf;

	for (const char *p = text; p && *p;) {
		size_t len = strcspn(p, "\n");
		const char *s = p;
		p = p[len] ? p + len + 1 : p + len;
		line++;
		if (len > 0 && s[len - 1] == '\r')
			len--;
		const char *hash = memchr(s, '#', len);
		if (hash)
			len = (size_t)(hash - s);
		if (memchr(s, ',', len)) {
			if (parse_alone(c, s, len, line, why, whylen) < 0)
				return -1;
			continue;
		}
		if (split_line(s, len, f, &nf, line, why, whylen) < 0)
			return -1;
		if (nf == 1 ? parse_alone(c, s, len, line, why, whylen) < 0
		            : nf > 1 &&
		                  parse_named(c, f, nf, line, why, whylen) < 0)
			return -1;
	}
	return 0;
}
