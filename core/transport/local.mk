# core/transport: how messages arrive and leave: stdio framing (one client
# and one session per process) and Streamable HTTP (one session per
# Mcp-Session-Id, on libmicrohttpd).
# (included from core/local.mk)
libtaskbox_core_la_SOURCES += \
	core/transport/http_challenge.c \
	core/transport/http_policy.c \
	core/transport/http_tokens.c \
	core/transport/jose_lib.c \
	core/transport/oauth.c \
	core/transport/oauth_claims.c \
	core/transport/oauth_fetch.c \
	core/transport/oauth_jwks.c \
	core/transport/oauth_jws.c \
	core/transport/server.c \
	core/transport/stop.c
noinst_HEADERS += \
	core/transport/http.h \
	core/transport/http_internal.h \
	core/transport/http_challenge.h \
	core/transport/http_policy.h \
	core/transport/http_tokens.h \
	core/transport/jose_lib.h \
	core/transport/oauth.h \
	core/transport/oauth_internal.h \
	core/transport/server.h \
	core/transport/stop.h

# The HTTP transport proper goes into the binary only. It is compiled with
# libmicrohttpd's headers and loads the library when it starts
# (http_mhd.c): nothing links it.
taskbox_SOURCES += \
	core/transport/http_answers.c \
	core/transport/http_auth.c \
	core/transport/http_conns.c \
	core/transport/http_conns.h \
	core/transport/http_exchange.c \
	core/transport/http_head.c \
	core/transport/http_mhd.c \
	core/transport/http_mhd.h \
	core/transport/http_reply.c \
	core/transport/http_request.c \
	core/transport/http_modern.c \
	core/transport/http_server.c \
	core/transport/http_sessions.c \
	core/transport/http_stateless.c \
	core/transport/http_stats.c \
	core/transport/http_watch.c \
	core/transport/sd_daemon.c \
	core/transport/sd_daemon.h
taskbox_CFLAGS += $(MHD_CFLAGS) $(SYSTEMD_CFLAGS)
