/* A JSON Schema subset for tool arguments: type (object, array, string,
 * integer, number, boolean, null), properties, required,
 * additionalProperties (false or a schema), items, minItems/maxItems,
 * minLength/maxLength in Unicode code points, minimum/maximum and their
 * exclusive forms, pattern (POSIX ERE), enum, const, and local "$ref"s to
 * "#/$defs/NAME". Other keywords (description, default, title, ...) are
 * carried but not applied. Compiled once; validation is thread-safe. */
#ifndef TB_SCHEMA_H
#define TB_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

struct tb_schema;

/* Compiles schema (borrowed; a reference is kept). Returns NULL and writes
 * why into err when a keyword is malformed or a pattern does not compile. */
struct tb_schema *tb_schema_compile(json_t *schema, char *err, size_t errlen);
void tb_schema_free(struct tb_schema *s);

/* Checks value against s. Returns 0, or -1 with a message naming the field
 * and the rule in msg. An integral real where an integer is required is
 * replaced in place by the integer. */
int tb_schema_validate(const struct tb_schema *s, json_t *value, char *msg,
                       size_t msglen);

#endif /* TB_SCHEMA_H */
