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
TESTS += tests/supervisor/conformance.sh tests/supervisor/conformance-native.sh
EXTRA_DIST += tests/supervisor/conformance.sh tests/supervisor/conformance.py \
	tests/supervisor/conformance-native.sh \
	tests/supervisor/conformance-static.sh

# The native supervisor: the same verbs, files and rules in C, libc only,
# for hosts that can run their own programs in the sandbox (a provider with
# TASKBOX_FEATURE_HOST_EXEC). Built beside the taskbox binary, which finds it
# there in a build directory, and installed to $(pkglibexecdir).
pkglibexec_PROGRAMS = taskbox-supervisor
taskbox_supervisor_SOURCES = core/supervisor/native/main.c \
	core/supervisor/native/args.c core/supervisor/native/json.c \
	core/supervisor/native/jscan.c core/supervisor/native/record.c \
	core/supervisor/native/mask.c core/supervisor/native/logs.c \
	core/supervisor/native/run.c core/supervisor/native/root.c \
	core/supervisor/native/start.c core/supervisor/native/verbs.c \
	core/supervisor/native/spawn.c core/supervisor/native/relay.c \
	core/supervisor/native/tty.c core/supervisor/native/keys.c \
	core/supervisor/native/input.c core/supervisor/native/base64.c \
	core/supervisor/native/signame.c core/supervisor/native/group.c \
	core/supervisor/native/clock.c core/supervisor/native/wait.c \
	core/supervisor/native/watch.c core/supervisor/native/watchargs.c \
	core/supervisor/native/lease.c \
	core/supervisor/native/sup.h
taskbox_supervisor_CFLAGS = $(AM_CFLAGS)

# The same program linked statically, without sanitizers and stripped: the
# host uploads it into a sandbox that has no python3 (core/tasks/sup_upload.c),
# whatever C library the sandbox's image carries.
if STATIC_SUPERVISOR
pkglibexec_PROGRAMS += taskbox-supervisor-static
TESTS += tests/supervisor/conformance-static.sh
taskbox_supervisor_static_SOURCES = $(taskbox_supervisor_SOURCES)
taskbox_supervisor_static_CFLAGS = -std=c11 $(WARN_CFLAGS)
taskbox_supervisor_static_LDFLAGS = -all-static -s
endif

# The host's choice between the two (core/tasks/sup_native.c).
libtaskbox_core_la_SOURCES += core/tasks/sup_native.c
noinst_HEADERS += core/tasks/sup_native.h
libtaskbox_core_la_CFLAGS += -DTB_PKGLIBEXECDIR='"$(pkglibexecdir)"'

# The server's choice between them, on the local provider.
EXTRA_DIST += tests/supervisor/host-choice.test.mjs
if INTEGRATION_TESTS
TESTS += tests/supervisor/host-choice.test.mjs
endif
