# core/tools: the tool registry, JSON Schema, argument checks and every tool
# handler.
# (included from core/local.mk)
libtaskbox_core_la_SOURCES += \
	core/tools/call.c \
	core/tools/call_box.c \
	core/tools/file_tools.c \
	core/tools/list_sandboxes_tool.c \
	core/tools/list_tasks_tool.c \
	core/tools/run_tool.c \
	core/tools/sandbox_tools.c \
	core/tools/schema.c \
	core/tools/schema_check.c \
	core/tools/task_backend.c \
	core/tools/task_input.c \
	core/tools/task_mcp.c \
	core/tools/task_park.c \
	core/tools/task_tools.c \
	core/tools/tasks.c \
	core/tools/test_tools.c \
	core/tools/tool_args.c \
	core/tools/tool_stats.c \
	core/tools/tools_registry.c
noinst_HEADERS += \
	core/tools/sandboxes.h \
	core/tools/schema.h \
	core/tools/schema_node.h \
	core/tools/task_backend.h \
	core/tools/task_input.h \
	core/tools/task_park.h \
	core/tools/task_schemas.h \
	core/tools/tasks.h \
	core/tools/test_tools.h \
	core/tools/tool.h \
	core/tools/tool_args.h \
	core/tools/tool_stats.h \
	core/tools/tools_registry.h
