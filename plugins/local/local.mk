# plugins/local: the embedded default provider (included from the top
# Makefile.am). Only the entry symbol is exported.
pkglib_LTLIBRARIES += plugins/local/local.la
plugins_local_local_la_SOURCES = plugins/local/local.c \
	plugins/local/sandbox.c plugins/local/exec.c plugins/local/files.c \
	plugins/local/rmtree.c plugins/local/spawn.c plugins/local/reaper.c \
	plugins/local/cgroup.c plugins/local/forkexec.c plugins/local/proctree.c \
	plugins/local/inroot.c \
	plugins/local/idle.c plugins/local/kept.c \
	plugins/local/owner.c plugins/local/list.c \
	plugins/local/local_int.h plugins/common/settings.c \
	plugins/common/settings.h
EXTRA_DIST += plugins/local/README.md
plugins_local_local_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
plugins_local_local_la_LIBADD = $(JANSSON_LIBS)
plugins_local_local_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version \
	-export-symbols-regex '^taskbox_provider_entry_v1$$'

# Unit tests: the built module loaded through libltdl, every op exercised.
LOCAL_PLUGIN_TESTS = tests/plugins/local/test_local_sandbox \
	tests/plugins/local/test_local_exec tests/plugins/local/test_local_files \
	tests/plugins/local/test_local_kill tests/plugins/local/test_local_inroot \
	tests/plugins/local/test_local_owner \
	tests/plugins/local/test_local_cgspawn
check_PROGRAMS += $(LOCAL_PLUGIN_TESTS)
TESTS += $(LOCAL_PLUGIN_TESTS)
noinst_HEADERS += tests/plugins/local/helper.h
LOCAL_TEST_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) \
	-DTB_LOCAL_MODULE_DIR='"$(abs_top_builddir)/plugins/local"'
LOCAL_TEST_LDADD = $(CRITERION_LIBS) $(LTDL_LIBS) $(PTHREAD_LIBS)
tests_plugins_local_test_local_sandbox_SOURCES = \
	tests/plugins/local/test_local_sandbox.c tests/plugins/local/helper.c
tests_plugins_local_test_local_sandbox_CFLAGS = $(LOCAL_TEST_CFLAGS)
tests_plugins_local_test_local_sandbox_LDADD = $(LOCAL_TEST_LDADD)
tests_plugins_local_test_local_exec_SOURCES = \
	tests/plugins/local/test_local_exec.c tests/plugins/local/helper.c
tests_plugins_local_test_local_exec_CFLAGS = $(LOCAL_TEST_CFLAGS)
tests_plugins_local_test_local_exec_LDADD = $(LOCAL_TEST_LDADD)
tests_plugins_local_test_local_files_SOURCES = \
	tests/plugins/local/test_local_files.c tests/plugins/local/helper.c
tests_plugins_local_test_local_files_CFLAGS = $(LOCAL_TEST_CFLAGS)
tests_plugins_local_test_local_files_LDADD = $(LOCAL_TEST_LDADD)
tests_plugins_local_test_local_kill_SOURCES = \
	tests/plugins/local/test_local_kill.c tests/plugins/local/helper.c
tests_plugins_local_test_local_kill_CFLAGS = $(LOCAL_TEST_CFLAGS)
tests_plugins_local_test_local_kill_LDADD = $(LOCAL_TEST_LDADD)
tests_plugins_local_test_local_inroot_SOURCES = \
	tests/plugins/local/test_local_inroot.c tests/plugins/local/helper.c
tests_plugins_local_test_local_inroot_CFLAGS = $(LOCAL_TEST_CFLAGS)
tests_plugins_local_test_local_inroot_LDADD = $(LOCAL_TEST_LDADD)
tests_plugins_local_test_local_owner_SOURCES = \
	tests/plugins/local/test_local_owner.c tests/plugins/local/helper.c
tests_plugins_local_test_local_owner_CFLAGS = $(LOCAL_TEST_CFLAGS)
tests_plugins_local_test_local_owner_LDADD = $(LOCAL_TEST_LDADD)
tests_plugins_local_test_local_cgspawn_SOURCES = \
	tests/plugins/local/test_local_cgspawn.c tests/plugins/local/helper.c
tests_plugins_local_test_local_cgspawn_CFLAGS = $(LOCAL_TEST_CFLAGS)
tests_plugins_local_test_local_cgspawn_LDADD = $(LOCAL_TEST_LDADD)

# Sandboxes under bubblewrap do not reach each other, and write_task's
# bytes never show in a command line (skipped where bwrap cannot run).
EXTRA_DIST += tests/plugins/local/bwrap-isolation.test.mjs
if INTEGRATION_TESTS
TESTS += tests/plugins/local/bwrap-isolation.test.mjs
endif

# A bounded libFuzzer run over tool arguments, the local provider behind
# them (tests/fuzz/tools.sh; skipped without clang; FUZZ_SECONDS sets the
# time, 30 s by default).
TESTS += tests/fuzz/tools.sh
EXTRA_DIST += tests/fuzz/tools.sh tests/fuzz/fuzz_tools.c \
	tests/fuzz/tools_corpus/create_run tests/fuzz/tools_corpus/task_cycle \
	tests/fuzz/tools_corpus/files tests/fuzz/tools_corpus/bad_ids \
	tests/fuzz/tools_corpus/malformed tests/fuzz/tools_corpus/nul-in-output \
	tests/fuzz/tools_corpus/interactive
