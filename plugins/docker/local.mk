# plugins/docker: build rules (included from the top Makefile.am)
pkglib_LTLIBRARIES += plugins/docker/docker.la
plugins_docker_docker_la_SOURCES = plugins/docker/docker.c \
	plugins/docker/transport.c plugins/docker/containers.c \
	plugins/docker/lifetime.c plugins/docker/init.c \
	plugins/docker/exec.c plugins/docker/archive.c plugins/docker/tar.c \
	plugins/docker/fetch.c plugins/docker/batch.c plugins/docker/pool.c \
	plugins/docker/conn_cache.c plugins/docker/dir_fetch.c \
	plugins/docker/owner.c plugins/docker/list.c \
	plugins/docker/docker.h plugins/common/settings.c \
	plugins/common/settings.h plugins/common/exec_deadline.c \
	plugins/common/exec_deadline.h
plugins_docker_docker_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) \
	$(JANSSON_CFLAGS) -fvisibility=hidden
plugins_docker_docker_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version \
	-export-symbols-regex '^taskbox_provider_entry_v1$$'
plugins_docker_docker_la_LIBADD = $(CURL_LIBS) $(JANSSON_LIBS) \
	$(PTHREAD_LIBS) -lm
EXTRA_DIST += plugins/docker/README.md

# Engine tests: a real engine started by tests/docker/engine.sh.
check_PROGRAMS += tests/docker/test_docker
tests_docker_test_docker_SOURCES = tests/docker/test_docker.c
tests_docker_test_docker_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_docker_test_docker_LDADD = $(CRITERION_LIBS) $(PTHREAD_LIBS) -ldl
EXTRA_DIST += tests/docker/docker.sh tests/docker/engine.sh
if INTEGRATION_TESTS
TESTS += tests/docker/docker.sh
endif

# The provider contract suite on this provider, against a real engine
# (tests/contract/providers/docker.mjs starts it), and again against one
# without an init binary.
EXTRA_DIST += tests/contract/providers/docker.mjs tests/contract/docker.test.mjs \
	tests/contract/docker-noinit.test.mjs
if INTEGRATION_TESTS
TESTS += tests/contract/docker.test.mjs tests/contract/docker-noinit.test.mjs
endif
