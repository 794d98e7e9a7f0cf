# tests/unit: the unit tests of the tasks layer's pure parts, and the
# provider contract suite on the local provider (included from the top
# Makefile.am); also the exec deadline ladder the plugins share.

# Unit tests of the pure parts.
tasks_unit_tests = \
	tests/unit/test_task_ids \
	tests/unit/test_utf8_page \
	tests/unit/test_host_mask \
	tests/unit/test_sup_record \
	tests/unit/test_pid_watch \
	tests/unit/test_dir_watch \
	tests/unit/test_tool_args \
	tests/unit/test_task_list \
	tests/unit/test_task_view
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
tests_unit_test_pid_watch_SOURCES = tests/unit/test_pid_watch.c tests/unit/open_fds.h
tests_unit_test_pid_watch_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_pid_watch_LDADD = $(tasks_unit_ldadd)
tests_unit_test_dir_watch_SOURCES = tests/unit/test_dir_watch.c tests/unit/open_fds.h
tests_unit_test_dir_watch_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_dir_watch_LDADD = $(tasks_unit_ldadd)
tests_unit_test_tool_args_SOURCES = tests/unit/test_tool_args.c
tests_unit_test_tool_args_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_tool_args_LDADD = $(tasks_unit_ldadd)
tests_unit_test_task_list_SOURCES = tests/unit/test_task_list.c
tests_unit_test_task_list_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_task_list_LDADD = $(tasks_unit_ldadd)
tests_unit_test_task_view_SOURCES = tests/unit/test_task_view.c
tests_unit_test_task_view_CFLAGS = $(tasks_unit_cflags)
tests_unit_test_task_view_LDADD = $(tasks_unit_ldadd)

# The provider contract suite (tests/contract/suite.mjs, one NAME.test.mjs
# per provider) and the demo session; NAME-modern.test.mjs runs the suite
# with the SDK v2 client pinned to MCP 2026-07-28 over stdio.
EXTRA_DIST += tests/contract/suite.mjs tests/contract/waiting.mjs \
	tests/contract/providers/local.mjs \
	tests/contract/local.test.mjs tests/contract/local-modern.test.mjs \
	tests/contract/local-nofile.test.mjs \
	tests/demo/session.mjs tests/demo/run.sh
if INTEGRATION_TESTS
TESTS += tests/contract/local.test.mjs tests/contract/local-modern.test.mjs \
	tests/contract/local-nofile.test.mjs
endif

# The same in MCP 2026-07-28 on the docker provider (a real engine: its
# place in tests/run-all.sh is ENGINE_TESTS) and on the e2b one (the fake).
# Registered here rather than beside docker.test.mjs and e2b.test.mjs in
# plugins/*/local.mk, with the same EXTRA_DIST and TESTS lines.
EXTRA_DIST += tests/contract/docker-modern.test.mjs \
	tests/contract/e2b-modern.test.mjs
if INTEGRATION_TESTS
TESTS += tests/contract/docker-modern.test.mjs \
	tests/contract/e2b-modern.test.mjs
endif

# The exec deadline ladder of plugins/common (compiled into the docker and
# k8s plugins), on a clock of the test's.
check_PROGRAMS += tests/unit/test_exec_deadline
TESTS += tests/unit/test_exec_deadline
tests_unit_test_exec_deadline_SOURCES = tests/unit/test_exec_deadline.c \
	plugins/common/exec_deadline.c plugins/common/exec_deadline.h
tests_unit_test_exec_deadline_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(srcdir)/plugins/common
tests_unit_test_exec_deadline_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_unit_test_exec_deadline_LDADD = $(CRITERION_LIBS)
