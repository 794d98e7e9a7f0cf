# plugins/e2b: the E2B provider (included from the top Makefile.am). Only the
# entry symbol is exported.
pkglib_LTLIBRARIES += plugins/e2b/e2b.la
plugins_e2b_e2b_la_SOURCES = plugins/e2b/e2b.c plugins/e2b/api.c \
	plugins/e2b/http.c plugins/e2b/errors.c plugins/e2b/connect_frame.c \
	plugins/e2b/envd_common.c plugins/e2b/envd_process.c \
	plugins/e2b/process_stream.c plugins/e2b/envd_files.c \
	plugins/e2b/envd_batch.c plugins/e2b/http_pool.c \
	plugins/e2b/conn_cache.c plugins/e2b/reconnect.c \
	plugins/e2b/owner.c plugins/e2b/list.c \
	plugins/e2b/e2b_int.h plugins/common/http_status.c \
	plugins/common/http_status.h plugins/common/error_message.c \
	plugins/common/error_message.h
plugins_e2b_e2b_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS) \
	-fvisibility=hidden
plugins_e2b_e2b_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version \
	-export-symbols-regex '^taskbox_provider_entry_v1$$'
plugins_e2b_e2b_la_LIBADD = $(CURL_LIBS) $(JANSSON_LIBS) $(PTHREAD_LIBS)
EXTRA_DIST += plugins/e2b/README.md

# A small host that drives the plugin op by op for the tests.
check_PROGRAMS += tests/e2b/e2b-driver
tests_e2b_e2b_driver_SOURCES = tests/e2b/driver.c
tests_e2b_e2b_driver_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_e2b_e2b_driver_LDADD = $(JANSSON_LIBS)

# Unit tests of the parsers and error helpers, built from the plugin's own
# sources.
check_PROGRAMS += tests/e2b/test_e2b_units
TESTS += tests/e2b/test_e2b_units
tests_e2b_test_e2b_units_SOURCES = tests/e2b/test_e2b_units.c \
	plugins/e2b/connect_frame.c plugins/e2b/errors.c \
	plugins/e2b/process_stream.c plugins/e2b/conn_cache.c \
	plugins/common/http_status.c plugins/common/error_message.c
tests_e2b_test_e2b_units_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) \
	$(CURL_CFLAGS) $(JANSSON_CFLAGS)
tests_e2b_test_e2b_units_LDADD = $(CRITERION_LIBS) $(JANSSON_LIBS) \
	$(PTHREAD_LIBS)

# A bounded libFuzzer run over the process-stream decoder (skipped without
# clang).
TESTS += tests/e2b/fuzz.sh
EXTRA_DIST += tests/e2b/fuzz.sh tests/e2b/fuzz_process_stream.c \
	tests/common/quiet_host.h tests/e2b/corpus/exit3 \
	tests/e2b/corpus/killed tests/e2b/corpus/error

EXTRA_DIST += tests/e2b/fake/server.mjs tests/e2b/fake/spawn.mjs \
	tests/e2b/fake/api.mjs tests/e2b/fake/envd.mjs \
	tests/e2b/fake/process.mjs tests/e2b/fake/files.mjs \
	tests/e2b/fake/connect.mjs tests/e2b/fake/sandboxes.mjs \
	tests/e2b/fake/tokens.mjs tests/e2b/fake/list.mjs \
	tests/e2b/plugin-driver.mjs

if INTEGRATION_TESTS
TESTS += tests/e2b/sdk-fidelity.test.mjs tests/e2b/plugin.test.mjs \
	tests/e2b/owner.test.mjs
endif
EXTRA_DIST += tests/e2b/sdk-fidelity.test.mjs tests/e2b/plugin.test.mjs \
	tests/e2b/owner.test.mjs

# The provider contract suite on this provider, against the fake.
EXTRA_DIST += tests/contract/providers/e2b.mjs tests/contract/e2b.test.mjs
if INTEGRATION_TESTS
TESTS += tests/contract/e2b.test.mjs
endif

# Unit tests of the ownership pieces (owner rule, times, metadata query).
check_PROGRAMS += tests/e2b/test_e2b_owner
TESTS += tests/e2b/test_e2b_owner
tests_e2b_test_e2b_owner_SOURCES = tests/e2b/test_e2b_owner.c \
	plugins/e2b/owner.c plugins/e2b/errors.c \
	plugins/common/http_status.c plugins/common/error_message.c
tests_e2b_test_e2b_owner_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) \
	$(CURL_CFLAGS) $(JANSSON_CFLAGS)
tests_e2b_test_e2b_owner_LDADD = $(CRITERION_LIBS) $(JANSSON_LIBS)
