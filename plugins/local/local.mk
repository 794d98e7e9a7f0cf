# plugins/local: the embedded default provider (included from the top
# Makefile.am). Only the entry symbol is exported.
pkglib_LTLIBRARIES += plugins/local/local.la
plugins_local_local_la_SOURCES = plugins/local/local.c \
	plugins/local/sandbox.c plugins/local/exec.c plugins/local/files.c \
	plugins/local/procs.c plugins/local/spawn.c plugins/local/reaper.c \
	plugins/local/local_int.h
plugins_local_local_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
plugins_local_local_la_LIBADD = $(JANSSON_LIBS)
plugins_local_local_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version \
	-export-symbols-regex '^taskbox_provider_entry_v1$$'
