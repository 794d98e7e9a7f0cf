# tests/mcp: unit tests of the MCP protocol core (included from core/mcp.mk).
mcp_unit_tests = tests/mcp/test_jsonrpc tests/mcp/test_schema \
	tests/mcp/test_mcp tests/mcp/test_server
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
