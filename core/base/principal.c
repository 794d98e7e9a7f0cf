/* The principal value of principal.h. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/principal.h"

void tb_principal_local(struct tb_principal *p, enum tb_auth_kind how)
{
	memset(p, 0, sizeof *p);
	strcpy(p->name, "local");
	p->scopes = TB_SCOPES_ALL;
	p->how = how;
}

bool tb_principal_set_name(struct tb_principal *p, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > TB_PRINCIPAL_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c == 0x7f)
			return false;
	}
	memcpy(p->name, name, n + 1);
	return true;
}

bool tb_principal_static_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 64)
		return false;
	return strspn(name,
	              "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	              "0123456789_.@-") == n;
}

unsigned tb_scopes_close(unsigned bits)
{
	if (bits & TB_SCOPE_ADMIN)
		bits |= TB_SCOPE_RUN;
	if (bits & TB_SCOPE_RUN)
		bits |= TB_SCOPE_READ;
	return bits & TB_SCOPES_ALL;
}

static const struct {
	enum tb_scope bit;
	const char *name;
} scopes[] = {
    {TB_SCOPE_READ, "taskbox:read"},
    {TB_SCOPE_RUN, "taskbox:run"},
    {TB_SCOPE_ADMIN, "taskbox:admin"},
};

const char *tb_scope_name(enum tb_scope s)
{
	for (size_t i = 0; i < sizeof scopes / sizeof scopes[0]; i++)
		if (scopes[i].bit == s)
			return scopes[i].name;
	return "";
}

unsigned tb_scope_parse(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof scopes / sizeof scopes[0]; i++)
		if (strlen(scopes[i].name) == len &&
		    memcmp(scopes[i].name, name, len) == 0)
			return scopes[i].bit;
	return 0;
}

const char *tb_auth_kind_name(enum tb_auth_kind how)
{
	switch (how) {
	case TB_AUTH_STDIO:
		return "stdio";
	case TB_AUTH_NONE:
		return "none";
	case TB_AUTH_STATIC:
		return "static";
	case TB_AUTH_OAUTH:
		return "oauth";
	}
	return "";
}
