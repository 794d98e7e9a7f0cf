/* tools/list and tools/call: describing tools as the negotiated version
 * allows, checking call parameters and handing calls to the pool. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/jsonrpc.h"
#include "protocol/mcp_session.h"
#include "protocol/mcp_tasks.h"

#define PAGE_SIZE 100

/* Whether array holds the string name. */
static bool lists(json_t *array, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(array, i, v)
	{
		if (json_is_string(v) &&
		    strcmp(json_string_value(v), name) == 0)
			return true;
	}
	return false;
}

/* In the modern era a sandbox_id the schema leaves optional (the session
 * default stands in for it) is required: d's description says so and
 * its inputSchema (a copy) lists it. */
static void without_sessions(json_t *d)
{
	json_t *schema = json_object_get(d, "inputSchema");
	json_t *required;
	char *text = NULL;

	if (!json_object_get(json_object_get(schema, "properties"),
	                     "sandbox_id") ||
	    lists(json_object_get(schema, "required"), "sandbox_id") ||
	    !(schema = json_deep_copy(schema)))
		return;
	required = json_object_get(schema, "required");
	if (!json_is_array(required)) {
		required = json_array();
		json_object_set_new(schema, "required", required);
	}
	json_array_append_new(required, json_string("sandbox_id"));
	json_object_set_new(d, "inputSchema", schema);
	if (asprintf(&text,
	             "%s In MCP 2026-07-28 there are no sessions, so no "
	             "default sandbox: sandbox_id is required.",
	             json_string_value(json_object_get(d, "description"))) >= 0)
		json_object_set_new(d, "description", json_string(text));
	free(text);
}

/* A tool as tools/list shows it to this session's version. */
static json_t *describe(const struct tb_mcp *s, const struct tb_tool_entry *e)
{
	const struct tb_tool *t = e->tool;
	json_t *d = json_pack("{s:s,s:s,s:O}", "name", t->name, "description",
	                      t->description, "inputSchema", e->input_schema);
	if (!d)
		return NULL;
	if (s->current_modern)
		without_sessions(d);
	if (tb_mcp_at_least(s, "2025-03-26") && e->annotations)
		json_object_set(d, "annotations", e->annotations);
	if (tb_mcp_at_least(s, "2025-06-18")) {
		if (t->title)
			json_object_set_new(d, "title", json_string(t->title));
		if (e->output_schema)
			json_object_set(d, "outputSchema", e->output_schema);
	}
	if (tb_mcp_at_least(s, "2025-11-25") && e->execution)
		json_object_set(d, "execution", e->execution);
	return d;
}

/* Reads the cursor, an opaque "p<index>" this server handed out. */
static int parse_cursor(json_t *params, size_t *start)
{
	json_t *cursor = json_object_get(params, "cursor");
	char tail;
	unsigned long long at;

	*start = 0;
	if (!cursor || json_is_null(cursor))
		return 0;
	if (!json_is_string(cursor) ||
	    sscanf(json_string_value(cursor), "p%llu%c", &at, &tail) != 1 ||
	    at > tb_tools_count())
		return -1;
	*start = (size_t)at;
	return 0;
}

void tb_mcp_tools_list(struct tb_mcp *s, json_t *id, json_t *params)
{
	size_t start, i, shown = 0;

	if (parse_cursor(params, &start) < 0) {
		tb_mcp_send(s, tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                            "Invalid params: field 'cursor' is "
		                            "not a cursor this server gave"));
		return;
	}
	json_t *tools = json_array();
	for (i = start; i < tb_tools_count() && shown < PAGE_SIZE; i++) {
		const struct tb_tool_entry *e = tb_tools_at(i);
		if (!tb_tools_visible(e, s->opts.test_tools))
			continue;
		json_array_append_new(tools, describe(s, e));
		shown++;
	}
	json_t *result = json_pack("{s:o}", "tools", tools);
	if (result && s->current_modern)
		tb_mcp_cacheable(result, TB_MCP_TTL_MS);
	for (; i < tb_tools_count(); i++)
		if (tb_tools_visible(tb_tools_at(i), s->opts.test_tools)) {
			char next[32];
			snprintf(next, sizeof next, "p%zu", i);
			json_object_set_new(result, "nextCursor",
			                    json_string(next));
			break;
		}
	tb_mcp_send(s, tb_rpc_result(id, result));
}

json_t *tb_mcp_meta_error(json_t *id, json_t *params, json_t **token)
{
	json_t *meta = json_object_get(params, "_meta");

	*token = json_object_get(meta, "progressToken");
	if (meta && !json_is_object(meta))
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: field '_meta' must be an "
		                    "object");
	if (*token && !json_is_string(*token) && !json_is_number(*token))
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: field "
		                    "'_meta.progressToken' must be a string or "
		                    "a number");
	return NULL;
}

/* Checks tools/call params; returns an error response or NULL. */
static json_t *bad_params(struct tb_mcp *s, json_t *id, json_t *params,
                          const struct tb_tool_entry **tool, json_t **args,
                          json_t **token, json_t **task)
{
	json_t *name = json_object_get(params, "name");

	*args = json_object_get(params, "arguments");
	*token = NULL;
	/* Without the tasks utility, 'task' is ignored (the spec says so). */
	*task =
	    tb_mcp_tasks_enabled(s) ? json_object_get(params, "task") : NULL;
	if (*task && !json_is_object(*task))
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: field 'task' must be an "
		                    "object");
	json_t *ttl = json_object_get(*task, "ttl");
	if (ttl && !json_is_null(ttl) &&
	    (!json_is_number(ttl) || json_number_value(ttl) < 0))
		return tb_rpc_error(
		    id, TB_RPC_INVALID_PARAMS,
		    "Invalid params: field 'task.ttl' must be a "
		    "number of milliseconds, 0 or more");
	if (!json_is_string(name))
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: field 'name' must be a "
		                    "string naming a tool");
	if (*args && !json_is_object(*args) && !json_is_null(*args))
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: field 'arguments' must be "
		                    "an object");
	json_t *bad_meta = tb_mcp_meta_error(id, params, token);
	if (bad_meta)
		return bad_meta;
	*tool = tb_tools_find(json_string_value(name), s->opts.test_tools);
	if (!*tool)
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Unknown tool: %.64s",
		                    json_string_value(name));
	return NULL;
}

void tb_mcp_tools_call(struct tb_mcp *s, json_t *id, const char *id_key,
                       json_t *params)
{
	const struct tb_tool_entry *tool = NULL;
	json_t *args, *token, *task;
	json_t *err = bad_params(s, id, params, &tool, &args, &token, &task);

	if (err) {
		tb_mcp_send(s, err);
		return;
	}
	/* The handler may change args (and it must not change the request). */
	json_t *copy =
	    json_is_object(args) ? json_deep_copy(args) : json_object();
	if (copy && s->current_modern &&
	    tb_mcp_tasks_ext_call(s, id, id_key, tool, params, copy, token)) {
		json_decref(copy);
		return;
	}
	if (copy && task) {
		tb_mcp_tasks_call(s, id, id_key, tool, copy, token);
		json_decref(copy);
		return;
	}
	struct tb_call *c =
	    copy ? tb_call_new(s, tool, id, id_key, copy, token) : NULL;
	json_decref(copy);
	if (!c) {
		tb_mcp_send(s, tb_rpc_error(id, TB_RPC_INTERNAL_ERROR,
		                            "Internal error: out of memory"));
		return;
	}
	tb_call_submit(c);
}
