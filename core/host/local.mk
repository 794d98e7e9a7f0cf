# core/host: the provider host: plugin loader, ABI checks, provider
# instances, config, sandbox references.
# (included from core/local.mk)
libtaskbox_core_la_SOURCES += \
	core/host/config_file.c \
	core/host/config_http.c \
	core/host/config_limits.c \
	core/host/config_oauth.c \
	core/host/loader.c \
	core/host/provider_check.c \
	core/host/provider_stats.c \
	core/host/registry.c \
	core/host/sandbox_ref.c
noinst_HEADERS += \
	core/host/config_file.h \
	core/host/config_http.h \
	core/host/config_limits.h \
	core/host/config_oauth.h \
	core/host/instance.h \
	core/host/loader.h \
	core/host/provider_check.h \
	core/host/provider_stats.h \
	core/host/registry.h \
	core/host/sandbox_ref.h
