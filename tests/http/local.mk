# tests/http: the Streamable HTTP transport: unit tests of its pure pieces
# and a node test of the real binary with node's own HTTP clients
# (included from the top Makefile.am).
check_PROGRAMS += tests/http/test_http_units
TESTS += tests/http/test_http_units
tests_http_test_http_units_SOURCES = tests/http/test_http_units.c
tests_http_test_http_units_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_http_test_http_units_LDADD = $(UNIT_TEST_LDADD)
check_PROGRAMS += tests/http/test_http_auth
TESTS += tests/http/test_http_auth
tests_http_test_http_auth_SOURCES = tests/http/test_http_auth.c
tests_http_test_http_auth_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_http_test_http_auth_LDADD = $(UNIT_TEST_LDADD)

EXTRA_DIST += tests/http/transport.test.mjs tests/http/parked-waits.test.mjs \
	tests/http/modern.test.mjs tests/http/quiet-waits.test.mjs \
	tests/http/oauth-flow.test.mjs tests/http/principals.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/transport.test.mjs tests/http/parked-waits.test.mjs \
	tests/http/modern.test.mjs tests/http/quiet-waits.test.mjs \
	tests/http/oauth-flow.test.mjs tests/http/principals.test.mjs
endif

# The OAuth token check's pieces (claims, signatures, keys, config).
check_PROGRAMS += tests/http/test_oauth_units
TESTS += tests/http/test_oauth_units
tests_http_test_oauth_units_SOURCES = tests/http/test_oauth_units.c
tests_http_test_oauth_units_CFLAGS = $(UNIT_TEST_CFLAGS) $(JOSE_CFLAGS) \
	$(CRYPTO_CFLAGS)
tests_http_test_oauth_units_LDADD = $(UNIT_TEST_LDADD) $(JOSE_LIBS) \
	$(CRYPTO_LIBS)

# The token table: OAuth access tokens from a test issuer (tests/http/
# oauth-issuer.mjs) against the real binary.
EXTRA_DIST += tests/http/oauth-tokens.test.mjs tests/http/oauth-issuer.mjs
if INTEGRATION_TESTS
TESTS += tests/http/oauth-tokens.test.mjs
endif

# Answers not yet read by their clients, within their byte budget.
EXTRA_DIST += tests/http/large-answers.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/large-answers.test.mjs
endif

# Descriptors of parked waits within the open-file limit, and a write_task
# flood beside other clients.
EXTRA_DIST += tests/http/fd-budget.test.mjs tests/http/write-flood.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/fd-budget.test.mjs tests/http/write-flood.test.mjs
endif

# The audit trail, from its file (a scripted SDK session, refusals,
# SIGHUP, a trail that cannot be written).
EXTRA_DIST += tests/http/audit.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/audit.test.mjs
endif

# Slow and malformed clients: deadlines, the unauthenticated cap, the
# odds of HTTP/1.1 heads and bodies (tests/lib/http-raw.mjs).
EXTRA_DIST += tests/http/odds.test.mjs tests/http/slowloris.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/odds.test.mjs tests/http/slowloris.test.mjs
endif

# An inherited listening socket (LISTEN_FDS), as systemd hands it.
EXTRA_DIST += tests/http/service.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/service.test.mjs
endif

# Whose sandbox: bob about alice's sandbox as about a missing one, on each
# provider; list_sandboxes; quotas; the refusals in the audit trail
# (tests/http/tenancy-suite.mjs). docker and k8s run in one stage only, as
# their contract suites do (tests/run-all.sh).
EXTRA_DIST += tests/http/tenancy-suite.mjs tests/http/tenancy-local.test.mjs \
	tests/http/tenancy-docker.test.mjs tests/http/tenancy-e2b.test.mjs \
	tests/http/tenancy-k8s.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/tenancy-local.test.mjs tests/http/tenancy-docker.test.mjs \
	tests/http/tenancy-e2b.test.mjs tests/http/tenancy-k8s.test.mjs
endif
