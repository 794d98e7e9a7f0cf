# core: the MCP protocol (included from the top Makefile.am): JSON-RPC
# framing, lifecycle and dispatch, the tool registry with its schema
# validator, the call context and the worker pool.
libtaskbox_core_la_SOURCES += core/jsonrpc.c core/mcp.c core/mcp_tools.c \
	core/server.c core/tools_registry.c core/schema.c core/schema_check.c \
	core/tool_call.c core/workers.c core/test_tools.c \
	core/mcp_tasks.c
noinst_HEADERS += core/jsonrpc.h core/mcp.h core/mcp_session.h \
	core/tools_registry.h core/schema.h core/schema_node.h core/workers.h \
	core/test_tools.h core/mcp_tasks.h core/task_backend.h

include tests/mcp/local.mk
