/* The registered tools as the MCP core sees them (tb_tools_register in
 * tool.h adds them). Read-only once serving starts. */
#ifndef TB_TOOLS_REGISTRY_H
#define TB_TOOLS_REGISTRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tools/schema.h"
#include "tools/tool.h"

struct tb_tool_entry {
	const struct tb_tool *tool;
	json_t *input_schema;  /* parsed once */
	json_t *output_schema; /* or NULL */
	json_t *annotations;   /* or NULL */
	json_t *execution;     /* or NULL */
	struct tb_schema *validator;
	size_t index; /* in the order of registration */
};

size_t tb_tools_count(void);
const struct tb_tool_entry *tb_tools_at(size_t i);

/* The tool called name, or NULL; test-only tools count only when
 * test_tools is set. */
const struct tb_tool_entry *tb_tools_find(const char *name, bool test_tools);

/* The scope (enum tb_scope) a call of the tool called name needs, or 0
 * when there is no such tool (the call is refused as unknown anyway). */
unsigned tb_tools_scope(const char *name);

/* True when entry is listed and callable in this mode. */
bool tb_tools_visible(const struct tb_tool_entry *e, bool test_tools);

/* Forgets every tool (tests and the fuzzer start clean with it). */
void tb_tools_reset(void);

#endif /* TB_TOOLS_REGISTRY_H */
