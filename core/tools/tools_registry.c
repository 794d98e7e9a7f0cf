/* The tool registry: tb_tools_register (tool.h) and the lookups of
 * tools_registry.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/principal.h"
#include "tools/tool_stats.h"
#include "tools/tools_registry.h"

static struct tb_tool_entry *entries;
static size_t nentries;

/* Parses optional JSON object text; returns -1 when text is set but is not
 * an object. */
static int parse_object(const struct tb_tool *t, const char *what,
                        const char *text, json_t **out)
{
	json_error_t err;

	*out = NULL;
	if (!text)
		return 0;
	*out = json_loads(text, 0, &err);
	if (!json_is_object(*out)) {
		tb_log(TB_LOG_ERROR, "tool %s: %s is not a JSON object: %s",
		       t->name, what, *out ? "wrong type" : err.text);
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static bool valid_name(const char *name)
{
	if (!name || !*name || strlen(name) > 64)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || *p == '_' ||
		      (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

static void entry_clear(struct tb_tool_entry *e)
{
	json_decref(e->input_schema);
	json_decref(e->output_schema);
	json_decref(e->annotations);
	json_decref(e->execution);
	tb_schema_free(e->validator);
	memset(e, 0, sizeof *e);
}

int tb_tools_register(const struct tb_tool *tool)
{
	struct tb_tool_entry e = {.tool = tool};
	char why[256];

	if (!tool || !valid_name(tool->name) || !tool->fn ||
	    !tool->description) {
		tb_log(TB_LOG_ERROR,
		       "tool %s: needs a name of [a-z_0-9], a "
		       "description and a handler",
		       tool && tool->name ? tool->name : "(null)");
		return -1;
	}
	for (size_t i = 0; i < nentries; i++)
		if (strcmp(entries[i].tool->name, tool->name) == 0) {
			tb_log(TB_LOG_ERROR, "tool %s: name already taken",
			       tool->name);
			return -1;
		}
	if (!tool->input_schema ||
	    parse_object(tool, "input_schema", tool->input_schema,
	                 &e.input_schema) < 0 ||
	    parse_object(tool, "output_schema", tool->output_schema,
	                 &e.output_schema) < 0 ||
	    parse_object(tool, "annotations", tool->annotations,
	                 &e.annotations) < 0 ||
	    parse_object(tool, "execution", tool->execution, &e.execution) < 0)
		goto err;
	e.validator = tb_schema_compile(e.input_schema, why, sizeof why);
	if (!e.validator) {
		tb_log(TB_LOG_ERROR, "tool %s: input_schema: %s", tool->name,
		       why);
		goto err;
	}
	struct tb_tool_entry *grown =
	    realloc(entries, (nentries + 1) * sizeof *entries);
	if (!grown)
		goto err;
	entries = grown;
	e.index = nentries;
	entries[nentries++] = e;
	tb_tool_stats_name(e.index, tool->name);
	return 0;
err:
	if (!e.input_schema && tool->input_schema == NULL)
		tb_log(TB_LOG_ERROR, "tool %s: input_schema is required",
		       tool->name);
	entry_clear(&e);
	return -1;
}

size_t tb_tools_count(void)
{
	return nentries;
}

const struct tb_tool_entry *tb_tools_at(size_t i)
{
	return i < nentries ? &entries[i] : NULL;
}

bool tb_tools_visible(const struct tb_tool_entry *e, bool test_tools)
{
	return test_tools || !(e->tool->flags & TB_TOOL_TEST_ONLY);
}

const struct tb_tool_entry *tb_tools_find(const char *name, bool test_tools)
{
	for (size_t i = 0; name && i < nentries; i++)
		if (strcmp(entries[i].tool->name, name) == 0)
			return tb_tools_visible(&entries[i], test_tools)
			           ? &entries[i]
			           : NULL;
	return NULL;
}

unsigned tb_tools_scope(const char *name)
{
	const struct tb_tool_entry *e = tb_tools_find(name, true);

	if (!e)
		return 0;
	return e->tool->scope ? e->tool->scope : TB_SCOPE_RUN;
}

void tb_tools_reset(void)
{
	for (size_t i = 0; i < nentries; i++)
		entry_clear(&entries[i]);
	free(entries);
	entries = NULL;
	nentries = 0;
}
