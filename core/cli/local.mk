# core/cli: the command line on top: parses it, wires the layers below and
# runs a subcommand. Its sources build the taskbox binary.
# (included from core/local.mk)
libtaskbox_core_la_SOURCES += \
	core/cli/modules.c
taskbox_SOURCES += \
	core/cli/cli_check_config.c \
	core/cli/cli_help.c \
	core/cli/cli_http.c \
	core/cli/cli_oauth.c \
	core/cli/cli_providers.c \
	core/cli/main.c
noinst_HEADERS += \
	core/cli/cli.h \
	core/cli/modules.h
