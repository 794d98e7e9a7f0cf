/* The compiled form of a tool schema, shared by schema.c (compile) and
 * schema_check.c (validate). Private to those two files. */
#ifndef TB_SCHEMA_NODE_H
#define TB_SCHEMA_NODE_H

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>

enum tb_type_bit {
	TB_T_NULL = 1u << 0,
	TB_T_BOOLEAN = 1u << 1,
	TB_T_INTEGER = 1u << 2,
	TB_T_NUMBER = 1u << 3,
	TB_T_STRING = 1u << 4,
	TB_T_ARRAY = 1u << 5,
	TB_T_OBJECT = 1u << 6,
};

struct tb_type_name {
	const char *name;
	unsigned bit;
};

/* The seven JSON Schema type names and their bits. */
extern const struct tb_type_name tb_type_names[7];

struct tb_snode;

struct tb_sprop {
	const char *name;
	struct tb_snode *schema;
};

struct tb_snode {
	bool never;     /* the schema `false` */
	unsigned types; /* 0: any type */
	json_t *enum_values, *const_value;
	bool has_min, has_max, min_excl, max_excl;
	double min, max;
	long long min_len, max_len, min_items, max_items;
	bool has_pattern;
	const char *pattern;
	regex_t re;
	struct tb_sprop *props;
	size_t nprops;
	json_t *required;
	bool closed;                 /* additionalProperties: false */
	struct tb_snode *additional; /* additionalProperties: {schema} */
	struct tb_snode *items;
};

struct tb_schema {
	json_t *root;
	struct tb_snode *top;
};

#endif /* TB_SCHEMA_NODE_H */
