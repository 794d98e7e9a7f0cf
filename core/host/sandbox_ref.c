/* Sandbox ids: validation, splitting and joining of "<instance>:<native>". */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "host/sandbox_ref.h"

static int is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_native_char(char c)
{
	return is_lower(c) || (c >= 'A' && c <= 'Z') || is_digit(c) ||
	       c == '_' || c == '.' || c == '-';
}

/* Length of the valid instance name at the start of s (0 when there is
 * none), stopping at the first character that cannot belong to one. */
static size_t instance_prefix_len(const char *s)
{
	size_t n = 0;

	if (!is_lower(s[0]))
		return 0;
	for (n = 1; s[n] != '\0'; n++)
		if (!is_lower(s[n]) && !is_digit(s[n]) && s[n] != '_' &&
		    s[n] != '-')
			break;
	return n;
}

int tb_instance_name_valid(const char *name)
{
	size_t n;

	if (name == NULL)
		return 0;
	n = instance_prefix_len(name);
	return n > 0 && n <= TB_INSTANCE_NAME_MAX && name[n] == '\0';
}

int tb_native_id_valid(const char *id)
{
	size_t n;

	if (id == NULL)
		return 0;
	for (n = 0; id[n] != '\0'; n++)
		if (!is_native_char(id[n]) || n >= TASKBOX_SANDBOX_ID_MAX - 1)
			return 0;
	return n > 0;
}

int tb_sandbox_ref_parse(const char *text, const char *field,
                         struct tb_sandbox_ref *ref, char *err, size_t errlen)
{
	const char *colon;
	size_t n;

	memset(ref, 0, sizeof(*ref));
	colon = text ? strchr(text, ':') : NULL;
	if (colon == NULL) {
		snprintf(err, errlen,
		         "%s: must be \"<provider>:<id>\" as create_sandbox "
		         "returned it",
		         field);
		return -1;
	}
	n = (size_t)(colon - text);
	if (n == 0 || n > TB_INSTANCE_NAME_MAX ||
	    instance_prefix_len(text) != n) {
		snprintf(err, errlen,
		         "%s: the provider part must match "
		         "^[a-z][a-z0-9_-]{0,31}$",
		         field);
		return -1;
	}
	if (!tb_native_id_valid(colon + 1)) {
		snprintf(err, errlen,
		         "%s: the id after the provider must match "
		         "^[A-Za-z0-9_.-]{1,127}$",
		         field);
		return -1;
	}
	memcpy(ref->instance, text, n);
	ref->instance[n] = '\0';
	strcpy(ref->native, colon + 1);
	return 0;
}

int tb_sandbox_ref_format(const char *instance, const char *native, char *out,
                          size_t outlen)
{
	int n;

	if (!tb_instance_name_valid(instance) || !tb_native_id_valid(native))
		return -1;
	n = snprintf(out, outlen, "%s:%s", instance, native);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}
