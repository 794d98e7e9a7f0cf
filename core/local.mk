# core: the server, one folder per layer, read top to bottom as the flow
# of a request (docs/architecture.md). Every layer but cli goes into one
# convenience library that the binary and the unit tests link; a file
# includes headers of its own layer and the layers below it only
# (tests/unit/layers.sh checks).
noinst_LTLIBRARIES += libtaskbox_core.la
libtaskbox_core_la_SOURCES =
libtaskbox_core_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS) \
	$(JOSE_CFLAGS) $(CRYPTO_CFLAGS)
# libcurl, libjose and libcrypto are loaded when first needed
# (base/curl_lib.c, transport/jose_lib.c, base/crypto_lib.c): nothing links
# them.
libtaskbox_core_la_LIBADD = $(JANSSON_LIBS) $(LTDL_LIBS) $(PTHREAD_LIBS)

# The binary. The local plugin is linked into it (-dlpreopen) so taskbox
# works with no config and no installed plugins; the loader finds it by
# name after --plugin-dir and $TASKBOX_PLUGIN_PATH. Preloading needs an
# archive, and the plugin itself is built only as a module: the same
# sources are built once more as a convenience archive of the same name.
noinst_LTLIBRARIES += core/embedded/local.la
core_embedded_local_la_SOURCES = $(plugins_local_local_la_SOURCES)
core_embedded_local_la_CFLAGS = $(plugins_local_local_la_CFLAGS)
core_embedded_local_la_LIBADD = $(plugins_local_local_la_LIBADD)
core_embedded_local_la_LDFLAGS = -module -static -rpath /nowhere

bin_PROGRAMS += taskbox
taskbox_SOURCES =
taskbox_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
taskbox_LDADD = -dlpreopen core/embedded/local.la libtaskbox_core.la \
	$(PTHREAD_LIBS)

include core/cli/local.mk
include core/transport/local.mk
include core/protocol/local.mk
include core/tools/local.mk
include core/tasks/local.mk
include core/host/local.mk
include core/base/local.mk
include core/supervisor/local.mk

# The layers hold: no file includes a header of a layer above its own.
TESTS += tests/unit/layers.sh
EXTRA_DIST += tests/unit/layers.sh
