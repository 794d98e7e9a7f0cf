# core: the server's pieces, gathered in one convenience library that the
# binary and the unit tests link.
noinst_LTLIBRARIES += libtaskbox_core.la
libtaskbox_core_la_SOURCES = core/log.c core/modules.c \
	core/provider_check.c core/loader.c core/registry.c core/config_file.c
libtaskbox_core_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS)
libtaskbox_core_la_LIBADD = $(JANSSON_LIBS) $(LTDL_LIBS) $(PTHREAD_LIBS)
noinst_HEADERS += core/log.h core/tool.h core/registry.h core/config_file.h \
	core/server.h core/modules.h core/provider_check.h core/loader.h \
	core/instance.h core/cli.h

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
taskbox_SOURCES = core/main.c core/cli_help.c core/cli_providers.c \
	core/cli_check_config.c
taskbox_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
taskbox_LDADD = -dlpreopen core/embedded/local.la libtaskbox_core.la \
	$(PTHREAD_LIBS)
