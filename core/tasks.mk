# core tasks: reconnectable tasks, sandboxes and the ordinary tools
# (included from the top Makefile.am).
libtaskbox_core_la_SOURCES += \
	core/sandbox_ref.c \
	core/task_id.c \
	core/utf8_page.c \
	core/host_mask.c \
	core/sup_record.c \
	core/record_cache.c \
	core/pid_watch.c \
	core/base64.c \
	core/tool_args.c \
	core/box.c \
	core/session.c \
	core/sup_client.c \
	core/task_view.c \
	core/task_wait.c \
	core/task_list.c \
	core/list_tasks_tool.c \
	core/task_mcp.c \
	core/task_tools.c \
	core/sandbox_tools.c \
	core/run_tool.c \
	core/file_tools.c \
	core/tasks.c
noinst_HEADERS += \
	core/sandbox_ref.h \
	core/task_id.h \
	core/utf8_page.h \
	core/host_mask.h \
	core/sup_record.h \
	core/record_cache.h \
	core/pid_watch.h \
	core/base64.h \
	core/tool_args.h \
	core/box.h \
	core/session.h \
	core/sup_client.h \
	core/task_view.h \
	core/task_wait.h \
	core/task_list.h \
	core/task_schemas.h \
	core/sandboxes.h \
	core/tasks.h

# Unit tests of the pure parts.
tasks_unit_tests = \
	tests/unit/test_task_ids \
	tests/unit/test_utf8_page \
	tests/unit/test_host_mask \
	tests/unit/test_sup_record \
	tests/unit/test_pid_watch \
	tests/unit/test_tool_args \
	tests/unit/test_task_list
check_PROGRAMS += $(tasks_unit_tests)
TESTS += $(tasks_unit_tests)
tasks_unit_cflags = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CRITERION_CFLAGS)
tasks_unit_ldadd = libtaskbox_core.la $(CRITERION_LIBS) $(JANSSON_LIBS)
tests_unit_test_task_ids_SOURCES = tests/unit/test_task_ids.c
tests_unit_test_task_ids_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_task_ids_LDADD = $(tasks_unit_ldadd)
tests_unit_test_utf8_page_SOURCES = tests/unit/test_utf8_page.c
tests_unit_test_utf8_page_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_utf8_page_LDADD = $(tasks_unit_ldadd)
tests_unit_test_host_mask_SOURCES = tests/unit/test_host_mask.c
tests_unit_test_host_mask_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_host_mask_LDADD = $(tasks_unit_ldadd)
tests_unit_test_sup_record_SOURCES = tests/unit/test_sup_record.c
tests_unit_test_sup_record_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_sup_record_LDADD = $(tasks_unit_ldadd)
tests_unit_test_pid_watch_SOURCES = tests/unit/test_pid_watch.c
tests_unit_test_pid_watch_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_pid_watch_LDADD = $(tasks_unit_ldadd)
tests_unit_test_tool_args_SOURCES = tests/unit/test_tool_args.c
tests_unit_test_tool_args_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_tool_args_LDADD = $(tasks_unit_ldadd)
tests_unit_test_task_list_SOURCES = tests/unit/test_task_list.c
tests_unit_test_task_list_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_task_list_LDADD = $(tasks_unit_ldadd)

# The provider contract suite (tests/contract/suite.mjs, one NAME.test.mjs
# per provider) and the demo session.
EXTRA_DIST += tests/contract/suite.mjs tests/contract/waiting.mjs \
	tests/contract/providers/local.mjs \
	tests/contract/local.test.mjs tests/demo/session.mjs tests/demo/run.sh
if INTEGRATION_TESTS
TESTS += tests/contract/local.test.mjs
endif
