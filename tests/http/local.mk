# tests/http: the Streamable HTTP transport: unit tests of its pure pieces
# and a node test of the real binary with node's own HTTP clients
# (included from the top Makefile.am).
check_PROGRAMS += tests/http/test_http_units
TESTS += tests/http/test_http_units
tests_http_test_http_units_SOURCES = tests/http/test_http_units.c
tests_http_test_http_units_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_http_test_http_units_LDADD = $(UNIT_TEST_LDADD)

EXTRA_DIST += tests/http/transport.test.mjs tests/http/parked-waits.test.mjs \
	tests/http/modern.test.mjs tests/http/quiet-waits.test.mjs \
	tests/http/service.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/transport.test.mjs tests/http/parked-waits.test.mjs \
	tests/http/modern.test.mjs tests/http/quiet-waits.test.mjs \
	tests/http/service.test.mjs
endif
