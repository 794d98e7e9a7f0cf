# Real MCP clients over the Streamable HTTP transport (included from the
# top Makefile.am): the provider contract suite with the SDK v1 and the SDK
# v2 client on each provider, two clients in sessions of their own on one
# server, and the Inspector's CLI. tests/lib/client.mjs starts
# `taskbox serve --http` for them; tests/conformance/run.sh runs the
# conformance suite against the same endpoint.
#
# The contract runs over HTTP (HTTP_PROVIDER_TESTS in tests/run-all.sh) run in
# one stage of tests/run-all.sh only, as the engine tests do.
EXTRA_DIST += tests/http/clients.mk tests/http/sessions.test.mjs \
	tests/http/inspector.test.mjs \
	tests/contract/local-http.test.mjs tests/contract/local-http-v2.test.mjs \
	tests/contract/docker-http.test.mjs tests/contract/docker-http-v2.test.mjs \
	tests/contract/e2b-http.test.mjs tests/contract/e2b-http-v2.test.mjs \
	tests/contract/local-http-modern.test.mjs \
	tests/contract/docker-http-modern.test.mjs \
	tests/contract/e2b-http-modern.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/sessions.test.mjs tests/http/inspector.test.mjs \
	tests/contract/local-http.test.mjs tests/contract/local-http-v2.test.mjs \
	tests/contract/docker-http.test.mjs tests/contract/docker-http-v2.test.mjs \
	tests/contract/e2b-http.test.mjs tests/contract/e2b-http-v2.test.mjs \
	tests/contract/local-http-modern.test.mjs \
	tests/contract/docker-http-modern.test.mjs \
	tests/contract/e2b-http-modern.test.mjs
endif
