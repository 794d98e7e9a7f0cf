/* The JSON Schema subset: compile errors and every validation rule. */
#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "tools/schema.h"

static struct tb_schema *compile(const char *text)
{
	char err[256];
	json_t *j = json_loads(text, 0, NULL);
	cr_assert(j, "bad test schema %s", text);
	struct tb_schema *s = tb_schema_compile(j, err, sizeof err);
	json_decref(j);
	cr_assert(s, "%s: %s", text, err);
	return s;
}

/* Validates value text; returns the message ("" when valid). */
static const char *check(struct tb_schema *s, const char *value)
{
	static char msg[512];
	json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);
	cr_assert(v, "bad test value %s", value);
	int rc = tb_schema_validate(s, v, msg, sizeof msg);
	cr_assert_eq(rc == 0, msg[0] == '\0');
	json_decref(v);
	return msg;
}

static void expect(struct tb_schema *s, const char *value, const char *words)
{
	const char *msg = check(s, value);
	if (!words) {
		cr_assert_str_empty(msg, "%s: %s", value, msg);
		return;
	}
	cr_assert(strstr(msg, words), "%s: expected \"%s\" in \"%s\"", value,
	          words, msg);
}

static const char *const tool_schema =
    "{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":4,"
    "\"pattern\":\"^[a-z]+$\"},"
    "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3600},"
    "\"r\":{\"type\":\"number\",\"exclusiveMinimum\":0},"
    "\"b\":{\"type\":\"boolean\"},"
    "\"e\":{\"enum\":[\"a\",\"b\"]},"
    "\"any\":{},"
    "\"list\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"},"
    "\"minItems\":1,\"maxItems\":2},"
    "\"obj\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":"
    "[\"string\",\"null\"]}},\"required\":[\"x\"],"
    "\"additionalProperties\":false}},"
    "\"required\":[\"name\"],\"additionalProperties\":false}";

Test(schema, accepts_valid_arguments)
{
	struct tb_schema *s = compile(tool_schema);
	expect(s, "{\"name\":\"ab\"}", NULL);
	expect(s,
	       "{\"name\":\"abcd\",\"n\":3600,\"r\":0.5,\"b\":true,"
	       "\"e\":\"b\",\"any\":[1],\"list\":[1,2],"
	       "\"obj\":{\"x\":null}}",
	       NULL);
	expect(s, "{\"name\":\"ab\",\"n\":2.0}", NULL);
	tb_schema_free(s);
}

Test(schema, names_the_field_and_the_rule)
{
	struct tb_schema *s = compile(tool_schema);
	expect(s, "{}", "field 'name': missing");
	expect(s, "{\"name\":\"ab\",\"zz\":1}", "field 'zz': unknown field");
	expect(s, "{\"name\":5}",
	       "field 'name': wrong type: expected string, "
	       "got integer");
	expect(s, "{\"name\":\"abcde\"}",
	       "field 'name': too long: 5 "
	       "characters, at most 4");
	expect(s, "{\"name\":\"a\"}", "field 'name': too short");
	expect(s, "{\"name\":\"AB\"}", "field 'name': bad pattern");
	expect(s, "{\"name\":\"ab\",\"n\":0}",
	       "field 'n': out of range: 0 is "
	       "below the minimum 1");
	expect(s, "{\"name\":\"ab\",\"n\":3601}", "field 'n': out of range");
	expect(s, "{\"name\":\"ab\",\"n\":1.5}",
	       "field 'n': wrong type: "
	       "expected integer, got number");
	expect(s, "{\"name\":\"ab\",\"n\":\"1\"}", "field 'n': wrong type");
	expect(s, "{\"name\":\"ab\",\"r\":0}", "exclusive minimum");
	expect(s, "{\"name\":\"ab\",\"b\":1}",
	       "field 'b': wrong type: "
	       "expected boolean");
	expect(s, "{\"name\":\"ab\",\"e\":\"c\"}",
	       "field 'e': not one of the "
	       "allowed values (\"a\", "
	       "\"b\")");
	expect(s, "{\"name\":\"ab\",\"list\":[]}", "field 'list': too short");
	expect(s, "{\"name\":\"ab\",\"list\":[1,2,3]}",
	       "field 'list': too "
	       "long");
	expect(s, "{\"name\":\"ab\",\"list\":[1,\"x\"]}",
	       "field 'list[1]': "
	       "wrong type");
	expect(s, "{\"name\":\"ab\",\"obj\":{}}", "field 'obj.x': missing");
	expect(s, "{\"name\":\"ab\",\"obj\":{\"x\":1}}",
	       "field 'obj.x': wrong type: expected null or string");
	expect(s, "{\"name\":\"ab\",\"obj\":{\"x\":\"\",\"y\":1}}",
	       "field 'obj.y': unknown field");
	expect(s, "[]", "field 'arguments': wrong type: expected object");
	tb_schema_free(s);
}

Test(schema, lengths_count_code_points_not_bytes)
{
	struct tb_schema *s = compile("{\"type\":\"string\",\"maxLength\":3}");
	expect(s, "\"\xc3\xa9\xc3\xa9\xc3\xa9\"", NULL);         /* 3 x é */
	expect(s, "\"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\"", NULL); /* 2 emoji */
	expect(s, "\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"",
	       "too long: 4 "
	       "characters");
	tb_schema_free(s);
}

Test(schema, refs_consts_and_boolean_schemas)
{
	struct tb_schema *s = compile(
	    "{\"$defs\":{\"p\":{\"type\":\"object\",\"properties\":{\"c\":"
	    "{\"const\":\"x\"}}}},\"type\":\"object\",\"properties\":{\"a\":"
	    "{\"$ref\":\"#/$defs/p\"},\"no\":false},"
	    "\"additionalProperties\":{\"type\":\"integer\"}}");
	expect(s, "{\"a\":{\"c\":\"x\"},\"extra\":4}", NULL);
	expect(s, "{\"a\":{\"c\":\"y\"}}",
	       "field 'a.c': not allowed: the "
	       "value must be \"x\"");
	expect(s, "{\"extra\":\"4\"}", "field 'extra': wrong type");
	expect(s, "{\"no\":1}", "field 'no': not allowed");
	tb_schema_free(s);
}

Test(schema, default_values_are_not_applied)
{
	struct tb_schema *s =
	    compile("{\"type\":\"object\",\"properties\":{\"d\":{\"type\":"
	            "\"integer\",\"default\":3}}}");
	json_t *v = json_object();
	char msg[128];
	cr_assert_eq(tb_schema_validate(s, v, msg, sizeof msg), 0);
	cr_assert_eq(json_object_size(v), 0);
	json_decref(v);
	tb_schema_free(s);
}

Test(schema, integral_reals_become_integers)
{
	struct tb_schema *s =
	    compile("{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
	            "\"integer\"}}}");
	json_t *v = json_pack("{s:f}", "n", 4.0);
	char msg[128];
	cr_assert_eq(tb_schema_validate(s, v, msg, sizeof msg), 0);
	cr_assert(json_is_integer(json_object_get(v, "n")));
	cr_assert_eq(json_integer_value(json_object_get(v, "n")), 4);
	json_decref(v);
	tb_schema_free(s);
}

Test(schema, malformed_schemas_are_refused)
{
	static const char *const bad[] = {
	    "{\"type\":\"strin\"}",
	    "{\"type\":[\"string\",7]}",
	    "{\"pattern\":\"(\"}",
	    "{\"pattern\":5}",
	    "{\"maxLength\":-1}",
	    "{\"minimum\":\"1\"}",
	    "{\"properties\":[]}",
	    "{\"required\":[1]}",
	    "{\"enum\":{}}",
	    "{\"additionalProperties\":3}",
	    "{\"$ref\":\"http://example.com/x\"}",
	    "{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":"
	    "\"#/$defs/a\"}",
	    "{\"items\":5}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char err[256] = "";
		json_t *j = json_loads(bad[i], 0, NULL);
		cr_assert(j, "%s", bad[i]);
		struct tb_schema *s = tb_schema_compile(j, err, sizeof err);
		cr_assert_null(s, "accepted %s", bad[i]);
		cr_assert(err[0], "no reason for %s", bad[i]);
		json_decref(j);
	}
}
