/* The scopes a message needs (tb_mcp_scope_needed of mcp.h): the tools
 * say theirs; the task methods read or change a task. */
#include "config.h"

#include <string.h>

#include "base/principal.h"
#include "protocol/mcp.h"
#include "tools/tools_registry.h"

unsigned tb_mcp_scope_needed(const char *method, const json_t *params)
{
	static const char *const reads[] = {"tasks/get", "tasks/result",
	                                    "tasks/list"};
	static const char *const runs[] = {"tasks/cancel", "tasks/update"};

	if (!method)
		return 0;
	if (strcmp(method, "tools/call") == 0) {
		const char *name =
		    json_string_value(json_object_get(params, "name"));
		return name ? tb_tools_scope(name) : 0;
	}
	for (size_t i = 0; i < sizeof reads / sizeof *reads; i++)
		if (strcmp(method, reads[i]) == 0)
			return TB_SCOPE_READ;
	for (size_t i = 0; i < sizeof runs / sizeof *runs; i++)
		if (strcmp(method, runs[i]) == 0)
			return TB_SCOPE_RUN;
	return 0;
}
