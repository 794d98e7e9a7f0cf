# Replicas behind a real load balancer (haproxy): the replica scenario of
# tests/http/replica-suite.mjs on local and e2b, and on docker; ownership
# and quotas across replicas (tenancy-replicas). Both run in
# one stage of tests/run-all.sh only (HTTP_PROVIDER_TESTS, ENGINE_TESTS):
# three servers at once under valgrind would take most of a CI run.
EXTRA_DIST += tests/http/replicas.mk tests/http/replicas.mjs \
	tests/http/replica-suite.mjs tests/http/replicas.test.mjs \
	tests/http/replicas-docker.test.mjs tests/http/tenancy-replicas.test.mjs
if INTEGRATION_TESTS
TESTS += tests/http/replicas.test.mjs tests/http/replicas-docker.test.mjs \
	tests/http/tenancy-replicas.test.mjs
endif
