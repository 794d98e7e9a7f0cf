/* Validation against a compiled schema (schema.h): the first violation
 * found is reported, naming the field and the rule. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/schema.h"
#include "tools/schema_node.h"

#define PATH_MAX_LEN 256

struct check {
	char *msg;
	size_t msglen;
	char path[PATH_MAX_LEN];
};

static int violation(struct check *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes "field 'PATH': " then the rule; returns -1. */
static int violation(struct check *c, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->msg, c->msglen,
	                 "field '%s': ", c->path[0] ? c->path : "arguments");
	if (n < 0 || (size_t)n >= c->msglen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->msg + n, c->msglen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static unsigned type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
		return TB_T_NULL;
	case JSON_TRUE:
	case JSON_FALSE:
		return TB_T_BOOLEAN;
	case JSON_INTEGER:
		return TB_T_INTEGER;
	case JSON_REAL:
		return TB_T_NUMBER;
	case JSON_STRING:
		return TB_T_STRING;
	case JSON_ARRAY:
		return TB_T_ARRAY;
	default:
		return TB_T_OBJECT;
	}
}

static const char *type_name(unsigned bit)
{
	for (int i = 0; i < 7; i++)
		if (tb_type_names[i].bit == bit)
			return tb_type_names[i].name;
	return "?";
}

/* "string or integer" for a set of type bits. */
static void expected_types(unsigned types, char *out, size_t outlen)
{
	size_t used = 0;
	out[0] = '\0';
	for (int i = 0; i < 7; i++) {
		if (!(types & tb_type_names[i].bit))
			continue;
		int n = snprintf(out + used, outlen - used, "%s%s",
		                 used ? " or " : "", tb_type_names[i].name);
		if (n < 0 || (size_t)n >= outlen - used)
			return;
		used += (size_t)n;
	}
}

/* Code points in valid UTF-8 (jansson only holds valid UTF-8). */
static size_t utf8_length(const char *s, size_t bytes)
{
	size_t n = 0;
	for (size_t i = 0; i < bytes; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}

static int check_node(struct check *c, const struct tb_snode *n, json_t *v,
                      json_t *parent, const char *key, size_t index);

/* Accepts an integral real as an integer and stores it as one. */
static json_t *integral(json_t *v, json_t *parent, const char *key,
                        size_t index)
{
	double d = json_real_value(v);
	if (!isfinite(d) || d != floor(d) || fabs(d) > 9007199254740992.0)
		return NULL;
	json_t *i = json_integer((json_int_t)d);
	if (!i)
		return NULL;
	int rc = json_is_object(parent)  ? json_object_set_new(parent, key, i)
	         : json_is_array(parent) ? json_array_set_new(parent, index, i)
	                                 : (json_decref(i), -1);
	return rc == 0 ? (key ? json_object_get(parent, key)
	                      : json_array_get(parent, index))
	               : NULL;
}

static int check_type(struct check *c, const struct tb_snode *n, json_t **v,
                      json_t *parent, const char *key, size_t index)
{
	unsigned t = type_of(*v);
	char want[96];

	if (!n->types || (n->types & t))
		return 0;
	if (t == TB_T_INTEGER && (n->types & TB_T_NUMBER))
		return 0;
	if (t == TB_T_NUMBER && (n->types & TB_T_INTEGER)) {
		json_t *i = integral(*v, parent, key, index);
		if (i) {
			*v = i;
			return 0;
		}
	}
	expected_types(n->types, want, sizeof want);
	return violation(c, "wrong type: expected %s, got %s", want,
	                 t == TB_T_NUMBER ? "number" : type_name(t));
}

static int check_number(struct check *c, const struct tb_snode *n,
                        const json_t *v)
{
	double d = json_number_value(v);
	if (n->has_min && (d < n->min || (n->min_excl && d == n->min)))
		return violation(
		    c, "out of range: %.17g is below the %s %.17g", d,
		    n->min_excl ? "exclusive minimum" : "minimum", n->min);
	if (n->has_max && (d > n->max || (n->max_excl && d == n->max)))
		return violation(
		    c, "out of range: %.17g is above the %s %.17g", d,
		    n->max_excl ? "exclusive maximum" : "maximum", n->max);
	return 0;
}

static int check_string(struct check *c, const struct tb_snode *n,
                        const json_t *v)
{
	const char *s = json_string_value(v);
	size_t len = utf8_length(s, json_string_length(v));
	if (n->max_len >= 0 && len > (size_t)n->max_len)
		return violation(c,
		                 "too long: %zu characters, at most %lld "
		                 "allowed (maxLength)",
		                 len, n->max_len);
	if (n->min_len >= 0 && len < (size_t)n->min_len)
		return violation(c,
		                 "too short: %zu characters, at least %lld "
		                 "required (minLength)",
		                 len, n->min_len);
	if (n->has_pattern && regexec(&n->re, s, 0, NULL, 0) != 0)
		return violation(c, "bad pattern: the value does not match %s",
		                 n->pattern);
	return 0;
}

/* Appends ".key" or "[index]" to the path; returns the old length. */
static size_t path_push(struct check *c, const char *key, size_t index)
{
	size_t old = strlen(c->path);
	if (key)
		snprintf(c->path + old, sizeof c->path - old, "%s%s",
		         old ? "." : "", key);
	else
		snprintf(c->path + old, sizeof c->path - old, "[%zu]", index);
	return old;
}

static int check_array(struct check *c, const struct tb_snode *n, json_t *v)
{
	size_t count = json_array_size(v);
	if (n->min_items >= 0 && count < (size_t)n->min_items)
		return violation(c,
		                 "too short: %zu items, at least %lld "
		                 "required (minItems)",
		                 count, n->min_items);
	if (n->max_items >= 0 && count > (size_t)n->max_items)
		return violation(c,
		                 "too long: %zu items, at most %lld allowed "
		                 "(maxItems)",
		                 count, n->max_items);
	for (size_t i = 0; n->items && i < count; i++) {
		size_t old = path_push(c, NULL, i);
		if (check_node(c, n->items, json_array_get(v, i), v, NULL, i))
			return -1;
		c->path[old] = '\0';
	}
	return 0;
}

static const struct tb_snode *prop_schema(const struct tb_snode *n,
                                          const char *key)
{
	for (size_t i = 0; i < n->nprops; i++)
		if (strcmp(n->props[i].name, key) == 0)
			return n->props[i].schema;
	return NULL;
}

static int check_object(struct check *c, const struct tb_snode *n, json_t *v)
{
	const char *key;
	json_t *sub;
	size_t i;

	json_object_foreach(v, key, sub)
	{
		const struct tb_snode *ps = prop_schema(n, key);
		size_t old = path_push(c, key, 0);
		if (!ps && n->closed)
			return violation(c, "unknown field (this tool takes "
			                    "no field of that name)");
		if (!ps)
			ps = n->additional;
		if (ps && check_node(c, ps, sub, v, key, 0))
			return -1;
		c->path[old] = '\0';
	}
	json_array_foreach(n->required, i, sub)
	{
		const char *name = json_string_value(sub);
		if (json_object_get(v, name))
			continue;
		size_t old = path_push(c, name, 0);
		violation(c, "missing: this field is required");
		c->path[old] = '\0';
		return -1;
	}
	return 0;
}

static int check_enum(struct check *c, const struct tb_snode *n,
                      const json_t *v)
{
	size_t i;
	json_t *one;
	char list[192] = "";
	size_t used = 0;

	if (n->const_value && !json_equal(n->const_value, (json_t *)v)) {
		char *want = json_dumps(n->const_value, JSON_ENCODE_ANY);
		violation(c, "not allowed: the value must be %s",
		          want ? want : "the constant");
		free(want);
		return -1;
	}
	if (!n->enum_values)
		return 0;
	json_array_foreach(n->enum_values, i, one)
	{
		if (json_equal(one, (json_t *)v))
			return 0;
		char *text = json_dumps(one, JSON_ENCODE_ANY | JSON_COMPACT);
		if (text && used < sizeof list) {
			int k = snprintf(list + used, sizeof list - used,
			                 "%s%s", used ? ", " : "", text);
			if (k > 0)
				used += (size_t)k;
		}
		free(text);
	}
	return violation(c, "not one of the allowed values (%s)", list);
}

static int check_node(struct check *c, const struct tb_snode *n, json_t *v,
                      json_t *parent, const char *key, size_t index)
{
	if (n->never)
		return violation(c, "not allowed");
	if (check_type(c, n, &v, parent, key, index))
		return -1;
	if (check_enum(c, n, v))
		return -1;
	switch (type_of(v)) {
	case TB_T_INTEGER:
	case TB_T_NUMBER:
		return check_number(c, n, v);
	case TB_T_STRING:
		return check_string(c, n, v);
	case TB_T_ARRAY:
		return check_array(c, n, v);
	case TB_T_OBJECT:
		return check_object(c, n, v);
	default:
		return 0;
	}
}

int tb_schema_validate(const struct tb_schema *s, json_t *value, char *msg,
                       size_t msglen)
{
	struct check c = {msg, msglen, ""};
	if (msglen)
		msg[0] = '\0';
	return check_node(&c, s->top, value, NULL, NULL, 0);
}
