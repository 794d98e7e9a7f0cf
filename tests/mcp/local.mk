# tests/mcp: unit tests of the protocol and transport layers (included from
# the top Makefile.am).
mcp_unit_tests = tests/mcp/test_jsonrpc tests/mcp/test_schema \
	tests/mcp/test_mcp tests/mcp/test_server tests/mcp/test_workers \
	tests/mcp/test_parker
check_PROGRAMS += $(mcp_unit_tests)
TESTS += $(mcp_unit_tests)

mcp_test_cflags = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CRITERION_CFLAGS)
mcp_test_ldadd = libtaskbox_core.la $(CRITERION_LIBS) $(JANSSON_LIBS) \
	$(PTHREAD_LIBS)

tests_mcp_test_jsonrpc_SOURCES = tests/mcp/test_jsonrpc.c
tests_mcp_test_jsonrpc_CFLAGS = $(mcp_test_cflags)
tests_mcp_test_jsonrpc_LDADD = $(mcp_test_ldadd)
tests_mcp_test_schema_SOURCES = tests/mcp/test_schema.c
tests_mcp_test_schema_CFLAGS = $(mcp_test_cflags)
tests_mcp_test_schema_LDADD = $(mcp_test_ldadd)
tests_mcp_test_mcp_SOURCES = tests/mcp/test_mcp.c tests/mcp/harness.c \
	tests/mcp/harness.h
tests_mcp_test_mcp_CFLAGS = $(mcp_test_cflags)
tests_mcp_test_mcp_LDADD = $(mcp_test_ldadd)
tests_mcp_test_server_SOURCES = tests/mcp/test_server.c
tests_mcp_test_server_CFLAGS = $(mcp_test_cflags)
tests_mcp_test_server_LDADD = $(mcp_test_ldadd)
tests_mcp_test_workers_SOURCES = tests/mcp/test_workers.c
tests_mcp_test_workers_CFLAGS = $(mcp_test_cflags)
tests_mcp_test_workers_LDADD = $(mcp_test_ldadd)
tests_mcp_test_parker_SOURCES = tests/mcp/test_parker.c
tests_mcp_test_parker_CFLAGS = $(mcp_test_cflags)
tests_mcp_test_parker_LDADD = $(mcp_test_ldadd)

# Integration: the official SDK client and raw pipes against the binary
# (MCP 2026-07-28 beside the legacy era: modern-stdio.test.mjs, and the
# official client of its Tasks extension: ext-tasks.test.mjs),
# the official conformance suite against its Streamable HTTP endpoint, and a
# bounded libFuzzer run (tests/fuzz/run.sh builds its own target with
# clang; FUZZ_SECONDS sets the time, 60 s by default).
EXTRA_DIST += tests/mcp/raw.mjs tests/mcp/sdk.test.mjs \
	tests/mcp/modern-stdio.test.mjs tests/mcp/ext-tasks.test.mjs \
	tests/mcp/robustness.test.mjs tests/mcp/stdout-guard.test.mjs \
	tests/mcp/parked-waits.test.mjs tests/conformance/run.sh tests/conformance/expected-failures.yml \
	tests/conformance/fs-globsync.mjs tests/conformance/fs-globsync-hooks.mjs \
	tests/conformance/fs-globsync-shim.mjs \
	tests/conformance/run-2026.sh tests/conformance/expected-failures-2026.yml \
	tests/conformance/serve.sh \
	tests/conformance/baseline-2026.mjs \
	tests/fuzz/run.sh tests/fuzz/fuzz_jsonrpc.c tests/fuzz/corpus \
	tests/mcp/list-sandboxes.test.mjs
if INTEGRATION_TESTS
TESTS += tests/mcp/sdk.test.mjs tests/mcp/modern-stdio.test.mjs tests/mcp/ext-tasks.test.mjs \
	tests/mcp/robustness.test.mjs \
	tests/mcp/stdout-guard.test.mjs tests/mcp/parked-waits.test.mjs tests/conformance/run.sh \
	tests/conformance/run-2026.sh tests/fuzz/run.sh tests/mcp/list-sandboxes.test.mjs
endif
