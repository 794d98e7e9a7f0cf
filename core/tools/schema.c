/* The JSON Schema subset of schema.h: compile once, validate many. */
#include "config.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/schema.h"
#include "tools/schema_node.h"

const struct tb_type_name tb_type_names[7] = {
    {"null", TB_T_NULL},       {"boolean", TB_T_BOOLEAN},
    {"integer", TB_T_INTEGER}, {"number", TB_T_NUMBER},
    {"string", TB_T_STRING},   {"array", TB_T_ARRAY},
    {"object", TB_T_OBJECT},
};

#define MAX_REF_DEPTH 32

struct compiler {
	json_t *root;
	char *err;
	size_t errlen;
	int depth;
};

static void node_free(struct tb_snode *n)
{
	if (!n)
		return;
	if (n->has_pattern)
		regfree(&n->re);
	for (size_t i = 0; i < n->nprops; i++)
		node_free(n->props[i].schema);
	free(n->props);
	node_free(n->additional);
	node_free(n->items);
	free(n);
}

static struct tb_snode *fail(struct compiler *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static struct tb_snode *fail(struct compiler *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return NULL;
}

static struct tb_snode *compile(struct compiler *c, json_t *s,
                                const char *where);

/* Reads a non-negative integer keyword; -1 when absent, -2 when bad. */
static long long count_keyword(json_t *s, const char *key)
{
	json_t *v = json_object_get(s, key);
	if (!v)
		return -1;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -2;
	return json_integer_value(v);
}

static int compile_types(struct compiler *c, struct tb_snode *n, json_t *t,
                         const char *where)
{
	json_t *one;
	size_t i;

	if (!t)
		return 0;
	if (json_is_string(t)) {
		for (i = 0; i < 7; i++)
			if (strcmp(json_string_value(t),
			           tb_type_names[i].name) == 0)
				n->types = tb_type_names[i].bit;
		if (n->types)
			return 0;
	} else if (json_is_array(t)) {
		json_array_foreach(t, i, one)
		{
			unsigned before = n->types;
			for (size_t k = 0; json_is_string(one) && k < 7; k++)
				if (strcmp(json_string_value(one),
				           tb_type_names[k].name) == 0)
					n->types |= tb_type_names[k].bit;
			if (n->types == before)
				break;
		}
		if (n->types && i == json_array_size(t))
			return 0;
	}
	fail(c, "%s: unknown \"type\"", where);
	return -1;
}

static int compile_numbers(struct compiler *c, struct tb_snode *n, json_t *s,
                           const char *where)
{
	static const char *const keys[] = {
	    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
	for (int i = 0; i < 4; i++) {
		json_t *v = json_object_get(s, keys[i]);
		if (!v)
			continue;
		if (!json_is_number(v)) {
			fail(c, "%s: \"%s\" must be a number", where, keys[i]);
			return -1;
		}
		double d = json_number_value(v);
		if (i % 2 == 0 && (!n->has_min || d >= n->min)) {
			n->has_min = true, n->min = d, n->min_excl = i >= 2;
		} else if (i % 2 == 1 && (!n->has_max || d <= n->max)) {
			n->has_max = true, n->max = d, n->max_excl = i >= 2;
		}
	}
	return 0;
}

static int compile_object(struct compiler *c, struct tb_snode *n, json_t *s,
                          const char *where)
{
	json_t *props = json_object_get(s, "properties");
	json_t *add = json_object_get(s, "additionalProperties");
	const char *key;
	json_t *sub;

	if (props && !json_is_object(props)) {
		fail(c, "%s: \"properties\" must be an object", where);
		return -1;
	}
	if (props && json_object_size(props)) {
		n->props = calloc(json_object_size(props), sizeof *n->props);
		if (!n->props) {
			fail(c, "out of memory");
			return -1;
		}
		json_object_foreach(props, key, sub)
		{
			struct tb_sprop *p = &n->props[n->nprops];
			p->name = key;
			p->schema = compile(c, sub, key);
			if (!p->schema)
				return -1;
			n->nprops++;
		}
	}
	n->required = json_object_get(s, "required");
	if (n->required) {
		size_t i;
		json_t *r;
		bool ok = json_is_array(n->required);
		json_array_foreach(n->required, i, r) ok =
		    ok && json_is_string(r);
		if (!ok) {
			fail(c, "%s: \"required\" must be an array of strings",
			     where);
			return -1;
		}
	}
	if (json_is_false(add)) {
		n->closed = true;
	} else if (json_is_object(add)) {
		n->additional = compile(c, add, "additionalProperties");
		if (!n->additional)
			return -1;
	} else if (add && !json_is_true(add)) {
		fail(c, "%s: bad \"additionalProperties\"", where);
		return -1;
	}
	return 0;
}

static int compile_strings_arrays(struct compiler *c, struct tb_snode *n,
                                  json_t *s, const char *where)
{
	n->min_len = count_keyword(s, "minLength");
	n->max_len = count_keyword(s, "maxLength");
	n->min_items = count_keyword(s, "minItems");
	n->max_items = count_keyword(s, "maxItems");
	if (n->min_len == -2 || n->max_len == -2 || n->min_items == -2 ||
	    n->max_items == -2) {
		fail(c,
		     "%s: length and item limits must be non-negative "
		     "integers",
		     where);
		return -1;
	}
	json_t *pattern = json_object_get(s, "pattern");
	if (pattern) {
		if (!json_is_string(pattern)) {
			fail(c, "%s: \"pattern\" must be a string", where);
			return -1;
		}
		n->pattern = json_string_value(pattern);
		if (regcomp(&n->re, n->pattern, REG_EXTENDED | REG_NOSUB)) {
			fail(c,
			     "%s: \"pattern\" %s is not a POSIX extended "
			     "regular expression",
			     where, n->pattern);
			return -1;
		}
		n->has_pattern = true;
	}
	json_t *items = json_object_get(s, "items");
	if (items) {
		n->items = compile(c, items, "items");
		if (!n->items)
			return -1;
	}
	return 0;
}

/* Resolves "#/$defs/NAME" (or "#/definitions/NAME") in the root schema. */
static json_t *resolve_ref(struct compiler *c, json_t *ref)
{
	const char *r = json_string_value(ref);
	if (!r)
		return NULL;
	if (strncmp(r, "#/$defs/", 8) == 0)
		return json_object_get(json_object_get(c->root, "$defs"),
		                       r + 8);
	if (strncmp(r, "#/definitions/", 14) == 0)
		return json_object_get(json_object_get(c->root, "definitions"),
		                       r + 14);
	return NULL;
}

static struct tb_snode *compile(struct compiler *c, json_t *s,
                                const char *where)
{
	struct tb_snode *n;

	if (c->depth > MAX_REF_DEPTH)
		return fail(c,
		            "%s: schema nested too deeply (recursive "
		            "\"$ref\"?)",
		            where);
	n = calloc(1, sizeof *n);
	if (!n)
		return fail(c, "out of memory");
	if (json_is_boolean(s)) {
		n->never = json_is_false(s);
		n->min_len = n->max_len = n->min_items = n->max_items = -1;
		return n;
	}
	if (!json_is_object(s)) {
		free(n);
		return fail(c, "%s: a schema must be an object or a boolean",
		            where);
	}
	json_t *ref = json_object_get(s, "$ref");
	if (ref) {
		json_t *target = resolve_ref(c, ref);
		free(n);
		if (!target)
			return fail(c, "%s: unsupported \"$ref\"", where);
		c->depth++;
		n = compile(c, target, where);
		c->depth--;
		return n;
	}
	c->depth++;
	n->enum_values = json_object_get(s, "enum");
	n->const_value = json_object_get(s, "const");
	if (n->enum_values && !json_is_array(n->enum_values)) {
		fail(c, "%s: \"enum\" must be an array", where);
		goto err;
	}
	if (compile_types(c, n, json_object_get(s, "type"), where) < 0 ||
	    compile_numbers(c, n, s, where) < 0 ||
	    compile_strings_arrays(c, n, s, where) < 0 ||
	    compile_object(c, n, s, where) < 0)
		goto err;
	c->depth--;
	return n;
err:
	c->depth--;
	node_free(n);
	return NULL;
}

struct tb_schema *tb_schema_compile(json_t *schema, char *err, size_t errlen)
{
	struct compiler c = {schema, err, errlen, 0};
	struct tb_schema *s = calloc(1, sizeof *s);

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->top = compile(&c, schema, "schema");
	if (!s->top) {
		free(s);
		return NULL;
	}
	s->root = json_incref(schema);
	return s;
}

void tb_schema_free(struct tb_schema *s)
{
	if (!s)
		return;
	node_free(s->top);
	json_decref(s->root);
	free(s);
}
