# core/base: small pieces every layer may use: logging, base64, UTF-8 pages,
# error bodies, JSON-RPC codes, listen addresses, metrics, principals.
# (included from core/local.mk)
libtaskbox_core_la_SOURCES += \
	core/base/audit.c \
	core/base/base64.c \
	core/base/error_json.c \
	core/base/fd_budget.c \
	core/base/crypto_lib.c \
	core/base/curl_lib.c \
	core/base/http_url.c \
	core/base/lazy_lib.c \
	core/base/listen_addr.c \
	core/base/log.c \
	core/base/metrics.c \
	core/base/principal.c \
	core/base/utf8_page.c
noinst_HEADERS += \
	core/base/audit.h \
	core/base/base64.h \
	core/base/error_json.h \
	core/base/fd_budget.h \
	core/base/crypto_lib.h \
	core/base/curl_lib.h \
	core/base/http_url.h \
	core/base/lazy_lib.h \
	core/base/listen_addr.h \
	core/base/log.h \
	core/base/metrics.h \
	core/base/principal.h \
	core/base/rpc_codes.h \
	core/base/utf8_page.h
