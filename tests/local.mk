# tests: the shared test plumbing, the unit tests of the foundation and the
# fake plugins they load. Other fragments add their own tests with
# `TESTS += ...` and may reuse UNIT_TEST_CFLAGS / UNIT_TEST_LDADD.

TEST_EXTENSIONS = .mjs .sh
MJS_LOG_COMPILER = node
SH_LOG_COMPILER = $(SHELL)

# Criterion programs (no extension) run under valgrind, except in the
# sanitizer build where ASan and UBSan do the checking.
if SANITIZERS
LOG_COMPILER =
else
LOG_COMPILER = $(srcdir)/tests/vg
endif

AM_TESTS_ENVIRONMENT = \
	TASKBOX_BIN='$(abs_top_builddir)/taskbox'; export TASKBOX_BIN; \
	TASKBOX_PLUGIN_PATH='$(abs_top_builddir)/plugins/local/.libs:$(abs_top_builddir)/plugins/docker/.libs:$(abs_top_builddir)/plugins/e2b/.libs:$(abs_top_builddir)/plugins/k8s/.libs'; \
	export TASKBOX_PLUGIN_PATH; \
	TASKBOX_SRCDIR='$(abs_top_srcdir)'; export TASKBOX_SRCDIR; \
	TASKBOX_BUILDDIR='$(abs_top_builddir)'; export TASKBOX_BUILDDIR; \
	TASKBOX_FAKEPLUGIN_DIR='$(abs_top_builddir)/tests/fakeplugins/.libs'; \
	export TASKBOX_FAKEPLUGIN_DIR; \
	TASKBOX_CC='$(CC)'; export TASKBOX_CC; \
	TASKBOX_CXX='$(CXX)'; export TASKBOX_CXX; \
	TASKBOX_TEST_WRAPPER="$${TASKBOX_TEST_WRAPPER-}"; \
	export TASKBOX_TEST_WRAPPER;

dist_noinst_SCRIPTS += tests/vg tests/run-all.sh tests/install-deps.sh
EXTRA_DIST += tests/package.json tests/package-lock.json tests/lib/client.mjs \
	tests/lib/haproxy.mjs tests/lib/verbs.mjs tests/lib/oidc.mjs \
	tests/lib/serve-http.mjs tests/lib/http-raw.mjs

# What a Criterion unit test compiles and links with.
UNIT_TEST_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) $(JANSSON_CFLAGS)
UNIT_TEST_LDADD = libtaskbox_core.la $(CRITERION_LIBS) $(JANSSON_LIBS) \
	$(PTHREAD_LIBS)

# Fake plugins: loadable modules only tests see (-rpath makes libtool build
# a module rather than a convenience archive).
FAKE_PLUGIN_LDFLAGS = -module -avoid-version -rpath /nowhere \
	-export-symbols-regex '^taskbox_provider_entry_v1$$'
FAKE_PLUGIN_CFLAGS = $(AM_CFLAGS) -Wno-unused-function
check_LTLIBRARIES += tests/fakeplugins/fake_good.la \
	tests/fakeplugins/fake_oldsize.la tests/fakeplugins/fake_major.la \
	tests/fakeplugins/fake_minor.la tests/fakeplugins/fake_short.la \
	tests/fakeplugins/fake_nullop.la tests/fakeplugins/fake_badname.la \
	tests/fakeplugins/fake_initfail.la tests/fakeplugins/fake_nosym.la
noinst_HEADERS += tests/fakeplugins/fake_ops.h
tests_fakeplugins_fake_good_la_SOURCES = tests/fakeplugins/fake_good.c
tests_fakeplugins_fake_good_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_good_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
tests_fakeplugins_fake_oldsize_la_SOURCES = tests/fakeplugins/fake_oldsize.c
tests_fakeplugins_fake_oldsize_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_oldsize_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
tests_fakeplugins_fake_major_la_SOURCES = tests/fakeplugins/fake_major.c
tests_fakeplugins_fake_major_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_major_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
tests_fakeplugins_fake_minor_la_SOURCES = tests/fakeplugins/fake_minor.c
tests_fakeplugins_fake_minor_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_minor_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
tests_fakeplugins_fake_short_la_SOURCES = tests/fakeplugins/fake_short.c
tests_fakeplugins_fake_short_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_short_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
tests_fakeplugins_fake_nullop_la_SOURCES = tests/fakeplugins/fake_nullop.c
tests_fakeplugins_fake_nullop_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_nullop_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
tests_fakeplugins_fake_badname_la_SOURCES = tests/fakeplugins/fake_badname.c
tests_fakeplugins_fake_badname_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_badname_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
tests_fakeplugins_fake_initfail_la_SOURCES = tests/fakeplugins/fake_initfail.c
tests_fakeplugins_fake_initfail_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_initfail_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
tests_fakeplugins_fake_nosym_la_SOURCES = tests/fakeplugins/fake_nosym.c
tests_fakeplugins_fake_nosym_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_nosym_la_LDFLAGS = -module -avoid-version \
	-rpath /nowhere -export-symbols-regex '^taskbox_provider_entry_v2$$'
# Two plugins as built outside the tree: one against the frozen 1.4 header
# (tests/abi/provider-1.4.h), one against the current header with the 1.5
# ops; tests/unit/test_abi_compat loads both.
check_LTLIBRARIES += tests/fakeplugins/fake_abi14.la \
	tests/fakeplugins/fake_abi15.la
noinst_HEADERS += tests/abi/provider-1.4.h
tests_fakeplugins_fake_abi14_la_SOURCES = tests/fakeplugins/fake_abi14.c
tests_fakeplugins_fake_abi14_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_abi14_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
tests_fakeplugins_fake_abi15_la_SOURCES = tests/fakeplugins/fake_abi15.c
tests_fakeplugins_fake_abi15_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_abi15_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)

# Unit tests of the loader, the ABI checks, the registry and the config.
FOUNDATION_UNIT_TESTS = tests/unit/test_abi_check tests/unit/test_loader \
	tests/unit/test_registry tests/unit/test_config \
	tests/unit/test_abi_compat
check_PROGRAMS += $(FOUNDATION_UNIT_TESTS)
TESTS += $(FOUNDATION_UNIT_TESTS)
tests_unit_test_abi_check_SOURCES = tests/unit/test_abi_check.c
tests_unit_test_abi_check_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_abi_check_LDADD = $(UNIT_TEST_LDADD)
tests_unit_test_loader_SOURCES = tests/unit/test_loader.c
tests_unit_test_loader_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_loader_LDADD = $(UNIT_TEST_LDADD)
tests_unit_test_abi_compat_SOURCES = tests/unit/test_abi_compat.c
tests_unit_test_abi_compat_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_abi_compat_LDADD = $(UNIT_TEST_LDADD)
tests_unit_test_registry_SOURCES = tests/unit/test_registry.c
tests_unit_test_registry_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_registry_LDADD = $(UNIT_TEST_LDADD)
tests_unit_test_config_SOURCES = tests/unit/test_config.c
tests_unit_test_config_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_config_LDADD = $(UNIT_TEST_LDADD)

# The public header compiles as C99, C11 and C++; the command line behaves
# as documented; an installed prefix builds and loads an outside plugin.
TESTS += tests/unit/header-compiles.sh tests/unit/cli.sh \
	tests/install/install-test.sh
EXTRA_DIST += tests/unit/header-compiles.sh tests/unit/cli.sh \
	tests/install/install-test.sh

# Added latency for the remote providers' stand-ins: the E2B fake's
# (--latency-ms, judged by the e2b SDK too) and the docker engine's latency
# proxy (tests/docker/engine.sh latency, tests/docker/latency-proxy.mjs).
EXTRA_DIST += tests/e2b/fake-latency.test.mjs tests/docker/latency.test.mjs \
	tests/docker/latency-proxy.mjs tests/docker/engine.mjs
if INTEGRATION_TESTS
TESTS += tests/e2b/fake-latency.test.mjs tests/docker/latency.test.mjs
endif
# Waits on a provider without shared pids, woken by the supervisor's watch
# verb in the sandbox, one per sandbox (core/tasks/remote_watch.c): on the
# E2B fake, and waits on two sandboxes on each remote provider, 200 on
# e2b and k8s, 60 on docker (tests/contract/shared-watch.mjs; one stage
# runs docker's, k8s's and e2b's, tests/run-all.sh).
EXTRA_DIST += tests/e2b/remote-watch.test.mjs tests/contract/shared-watch.mjs \
	tests/contract/shared-watch-e2b.test.mjs \
	tests/contract/shared-watch-docker.test.mjs \
	tests/contract/shared-watch-k8s.test.mjs
if INTEGRATION_TESTS
TESTS += tests/e2b/remote-watch.test.mjs \
	tests/contract/shared-watch-e2b.test.mjs \
	tests/contract/shared-watch-docker.test.mjs \
	tests/contract/shared-watch-k8s.test.mjs
endif
# An e2b instance whose verbs all run the static supervisor copied into
# the sandbox ("supervisor": "static").
EXTRA_DIST += tests/e2b/static-supervisor.test.mjs
if INTEGRATION_TESTS
if STATIC_SUPERVISOR
TESTS += tests/e2b/static-supervisor.test.mjs
endif
endif
# The docker provider on an image without python3 (the static supervisor
# copied in; the k8s one runs the whole contract suite so:
# tests/contract/k8s-nopython.test.mjs).
EXTRA_DIST += tests/docker/nopython.test.mjs
if INTEGRATION_TESTS
if STATIC_SUPERVISOR
TESTS += tests/docker/nopython.test.mjs
endif
endif

# Whose sandbox, piece by piece (ownership, listing, limits, quotas),
# against fake_owners, a plugin of ABI 1.5 that keeps owners in memory.
check_LTLIBRARIES += tests/fakeplugins/fake_owners.la
tests_fakeplugins_fake_owners_la_SOURCES = tests/fakeplugins/fake_owners.c
tests_fakeplugins_fake_owners_la_CFLAGS = $(FAKE_PLUGIN_CFLAGS)
tests_fakeplugins_fake_owners_la_LDFLAGS = $(FAKE_PLUGIN_LDFLAGS)
check_PROGRAMS += tests/unit/test_tenancy
TESTS += tests/unit/test_tenancy
tests_unit_test_tenancy_SOURCES = tests/unit/test_tenancy.c
tests_unit_test_tenancy_CFLAGS = $(UNIT_TEST_CFLAGS)
tests_unit_test_tenancy_LDADD = $(UNIT_TEST_LDADD)
