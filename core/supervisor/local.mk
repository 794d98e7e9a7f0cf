# core/supervisor: the in-sandbox supervisor (docs/supervisor.md). Its Python
# source is embedded into the core as a C string at build time.
noinst_HEADERS += core/supervisor/supervisor_source.h
nodist_libtaskbox_core_la_SOURCES = core/supervisor/supervisor_source.c
BUILT_SOURCES += core/supervisor/supervisor_source.c
CLEANFILES += core/supervisor/supervisor_source.c
EXTRA_DIST += core/supervisor/taskbox_supervisor.py core/supervisor/embed.sh \
	docs/supervisor.md

core/supervisor/supervisor_source.c: $(srcdir)/core/supervisor/taskbox_supervisor.py \
		$(srcdir)/core/supervisor/embed.sh
	$(AM_V_GEN)$(MKDIR_P) core/supervisor && \
	$(SHELL) $(srcdir)/core/supervisor/embed.sh \
		$(srcdir)/core/supervisor/taskbox_supervisor.py > $@.tmp && \
	mv -f $@.tmp $@

# The conformance suite drives the supervisor through its command line only;
# $TB_SUPERVISOR selects another implementation of docs/supervisor.md.
TESTS += tests/supervisor/conformance.sh
EXTRA_DIST += tests/supervisor/conformance.sh tests/supervisor/conformance.py
