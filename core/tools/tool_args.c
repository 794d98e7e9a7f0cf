/* Argument checks shared by the tasks layer's tools. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tools/tool_args.h"
#include "base/utf8_page.h"

int tb_args_known(json_t *args, const char *const *known, char *err,
                  size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(args)) {
		snprintf(err, errlen, "arguments: must be an object");
		return -1;
	}
	json_object_foreach(args, key, v)
	{
		size_t i;
		bool ok = false;

		for (i = 0; known[i] && !ok; i++)
			ok = strcmp(key, known[i]) == 0;
		if (!ok) {
			snprintf(err, errlen,
			         "%.64s: unknown field (additional properties "
			         "are not allowed)",
			         key);
			return -1;
		}
	}
	return 0;
}

int tb_arg_int(json_t *args, const char *name, int64_t lo, int64_t hi,
               int64_t def, int64_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(args, name);
	int64_t x;

	if (v == NULL) {
		*out = def;
		return 0;
	}
	if (json_is_real(v) &&
	    json_real_value(v) == (double)(int64_t)json_real_value(v))
		x = (int64_t)json_real_value(v);
	else if (json_is_integer(v))
		x = (int64_t)json_integer_value(v);
	else {
		snprintf(err, errlen, "%s: must be an integer", name);
		return -1;
	}
	if (x < lo || x > hi) {
		snprintf(err, errlen, "%s: must be between %lld and %lld", name,
		         (long long)lo, (long long)hi);
		return -1;
	}
	*out = x;
	return 0;
}

static size_t utf8_chars(const char *s, size_t bytes)
{
	size_t i, n = 0;

	for (i = 0; i < bytes; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}

int tb_arg_str(json_t *args, const char *name, bool required, size_t min,
               size_t max, const char **out, char *err, size_t errlen)
{
	json_t *v = json_object_get(args, name);
	size_t n;

	*out = NULL;
	if (v == NULL) {
		if (!required)
			return 0;
		snprintf(err, errlen, "%s: is required", name);
		return -1;
	}
	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s: must be a string", name);
		return -1;
	}
	n = utf8_chars(json_string_value(v), json_string_length(v));
	if (n < min || n > max) {
		snprintf(err, errlen,
		         "%s: must be %zu to %zu characters long (got %zu)",
		         name, min, max, n);
		return -1;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(err, errlen, "%s: must not contain NUL characters",
		         name);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

int tb_arg_enum(json_t *args, const char *name, const char *const *choices,
                const char *def, const char **out, char *err, size_t errlen)
{
	json_t *v = json_object_get(args, name);
	size_t i;

	*out = def;
	if (v == NULL)
		return 0;
	for (i = 0; json_is_string(v) && choices[i]; i++)
		if (strcmp(json_string_value(v), choices[i]) == 0) {
			*out = choices[i];
			return 0;
		}
	snprintf(err, errlen, "%s: must be one of", name);
	for (i = 0; choices[i]; i++) {
		size_t used = strlen(err);

		snprintf(err + used, errlen - used, "%s \"%s\"", i ? "," : "",
		         choices[i]);
	}
	return -1;
}

int tb_arg_bool(json_t *args, const char *name, bool def, bool *out, char *err,
                size_t errlen)
{
	json_t *v = json_object_get(args, name);

	*out = def;
	if (v == NULL)
		return 0;
	if (!json_is_boolean(v)) {
		snprintf(err, errlen, "%s: must be true or false", name);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

size_t tb_json_ascii_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 2; /* the quotes */

	for (; *p; p++) {
		if (*p == '"' || *p == '\\' || *p == '\b' || *p == '\f' ||
		    *p == '\n' || *p == '\r' || *p == '\t')
			n += 2;
		else if (*p < 0x20)
			n += 6;
		else if (*p < 0x80)
			n += 1;
		else if (*p >= 0xF0)
			n += 12; /* a surrogate pair, \uXXXX\uXXXX */
		else if (*p >= 0xC0)
			n += 6;
		/* continuation bytes are counted with their lead */
	}
	return n;
}
