# core: the server's pieces, gathered in one convenience library that the
# binary and the unit tests link.
noinst_LTLIBRARIES += libtaskbox_core.la
libtaskbox_core_la_SOURCES = core/log.c core/modules.c
libtaskbox_core_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS)
libtaskbox_core_la_LIBADD = $(JANSSON_LIBS) $(LTDL_LIBS) $(PTHREAD_LIBS)
noinst_HEADERS += core/log.h core/tool.h core/registry.h core/config_file.h \
	core/server.h core/modules.h
