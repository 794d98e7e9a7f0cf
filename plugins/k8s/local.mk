# plugins/k8s: the Kubernetes provider (included from the top Makefile.am).
# Only the entry symbol is exported.
pkglib_LTLIBRARIES += plugins/k8s/k8s.la
plugins_k8s_k8s_la_SOURCES = plugins/k8s/k8s.c plugins/k8s/settings.c \
	plugins/k8s/kubeconfig.c plugins/k8s/errors.c plugins/k8s/rest.c \
	plugins/k8s/objects.c plugins/k8s/pods.c plugins/k8s/cache.c \
	plugins/k8s/reaper.c plugins/k8s/channels.c plugins/k8s/ws.c \
	plugins/k8s/wsaccept.c plugins/k8s/exec.c plugins/k8s/files.c \
	plugins/k8s/argfiles.c plugins/k8s/batch.c plugins/k8s/list.c \
	plugins/k8s/k8s_int.h plugins/common/settings.c \
	plugins/common/settings.h plugins/common/http_status.c \
	plugins/common/http_status.h plugins/common/error_message.c \
	plugins/common/error_message.h plugins/common/exec_deadline.c \
	plugins/common/exec_deadline.h
plugins_k8s_k8s_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS) \
	$(YAML_CFLAGS) $(CRYPTO_CFLAGS) $(WSLAY_CFLAGS) -fvisibility=hidden
plugins_k8s_k8s_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version \
	-export-symbols-regex '^taskbox_provider_entry_v1$$'
plugins_k8s_k8s_la_LIBADD = $(CURL_LIBS) $(JANSSON_LIBS) $(YAML_LIBS) \
	$(CRYPTO_LIBS) $(WSLAY_LIBS) $(PTHREAD_LIBS)
EXTRA_DIST += plugins/k8s/README.md

# Unit tests of the pure parts: the channel decoder, the handshake's
# accept value, kubeconfig parsing, ids and times, object building.
check_PROGRAMS += tests/k8s/test_k8s_units
TESTS += tests/k8s/test_k8s_units
tests_k8s_test_k8s_units_SOURCES = tests/k8s/test_k8s_units.c \
	tests/common/quiet_host.h \
	plugins/k8s/channels.c plugins/k8s/wsaccept.c plugins/k8s/kubeconfig.c \
	plugins/k8s/objects.c plugins/k8s/errors.c \
	plugins/common/http_status.c plugins/common/error_message.c
tests_k8s_test_k8s_units_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS) \
	$(CURL_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) $(CRYPTO_CFLAGS)
tests_k8s_test_k8s_units_LDADD = $(CRITERION_LIBS) $(JANSSON_LIBS) \
	$(YAML_LIBS) $(CRYPTO_LIBS) $(PTHREAD_LIBS)

# `taskbox providers` lists it; check-config --start names a bad setting.
TESTS += tests/k8s/providers.sh
EXTRA_DIST += tests/k8s/providers.sh

# A bounded libFuzzer run over the channel decoder (skipped without clang).
TESTS += tests/k8s/fuzz.sh
EXTRA_DIST += tests/k8s/fuzz.sh tests/k8s/fuzz_channels.c \
	tests/common/quiet_host.h tests/k8s/corpus/exit7 \
	tests/k8s/corpus/success tests/k8s/corpus/noexit

# The plugin against the fake apiserver: op by op through the e2b test
# driver (any plugin), and the provider contract suite on both kinds.
EXTRA_DIST += tests/k8s/plugin-driver.mjs tests/k8s/fake.mjs \
	tests/k8s/faults.test.mjs tests/contract/providers/k8s.mjs \
	tests/contract/k8s.test.mjs tests/contract/k8s-sandbox.test.mjs \
	tests/contract/k8s-nopython.test.mjs
if INTEGRATION_TESTS
TESTS += tests/k8s/faults.test.mjs tests/contract/k8s.test.mjs \
	tests/contract/k8s-sandbox.test.mjs
# An image without python3 needs the static supervisor.
if STATIC_SUPERVISOR
TESTS += tests/contract/k8s-nopython.test.mjs
endif
endif
