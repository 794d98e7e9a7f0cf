# core/protocol: JSON-RPC and MCP: lifecycle, versions, dispatch, the calls
# in flight, the MCP tasks utility, the worker pool.
# (included from core/local.mk)
libtaskbox_core_la_SOURCES += \
	core/protocol/jsonrpc.c \
	core/protocol/mcp.c \
	core/protocol/mcp_era.c \
	core/protocol/mcp_scope.c \
	core/protocol/mcp_stats.c \
	core/protocol/mcp_tasks.c \
	core/protocol/mcp_tasks_ext.c \
	core/protocol/mcp_tools.c \
	core/protocol/parker.c \
	core/protocol/tool_call.c \
	core/protocol/workers.c
noinst_HEADERS += \
	core/protocol/jsonrpc.h \
	core/protocol/mcp.h \
	core/protocol/mcp_era.h \
	core/protocol/mcp_session.h \
	core/protocol/mcp_stats.h \
	core/protocol/mcp_tasks.h \
	core/protocol/parker.h \
	core/protocol/workers.h
