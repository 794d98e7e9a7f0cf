# core/transport: how messages arrive and leave: stdio framing, one client
# and one session per process.
# (included from core/local.mk)
libtaskbox_core_la_SOURCES += \
	core/transport/server.c
noinst_HEADERS += \
	core/transport/server.h
