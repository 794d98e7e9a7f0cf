/* The table of open HTTP connections and their deadlines: a request's
 * headers must be complete a few seconds after the request began (the
 * connection opened, or its previous answer ended), its body some seconds
 * after its headers, whatever the pace of the bytes; connections none of
 * whose requests has authenticated are capped apart from the others. A
 * connection past its deadline is shut down (shutdown(2)), and
 * libmicrohttpd closes it. Private to core/transport/http*.c. */
#ifndef TB_HTTP_CONNS_H
#define TB_HTTP_CONNS_H

#include <stdbool.h>
#include <stdint.h>

enum http_conn_phase {
	HTTP_CONN_HEAD, /* waiting for a request's headers */
	HTTP_CONN_BODY, /* headers read, waiting for the body */
	HTTP_CONN_BUSY  /* the request is read: being served or answered */
};

struct http_conn_limits {
	unsigned header_ms; /* headers complete, from the request's start */
	unsigned idle_ms;   /* more for an authenticated connection's next
	                       request, which may wait between requests */
	unsigned body_ms;   /* the body complete, from the headers' end */
	unsigned max_unauthenticated; /* 0: no cap (no token is asked for:
	                                 every connection counts as
	                                 authenticated) */
};

struct http_conns;
struct http_conn;

/* A table with these limits; NULL when out of memory. */
struct http_conns *http_conns_new(const struct http_conn_limits *limits);

/* Frees t; every connection must be closed. */
void http_conns_free(struct http_conns *t);

/* A new connection on socket fd (libmicrohttpd's thread, as it starts):
 * in HEAD from now, unauthenticated. Past the cap of unauthenticated
 * connections, the oldest that has waited over a second for its headers
 * is shut down. NULL when out of memory (then the connection is shut
 * down). */
struct http_conn *http_conn_open(struct http_conns *t, int fd);

/* The connection closes (libmicrohttpd's thread, before its socket is
 * closed): forgets it. c may be NULL. */
void http_conn_close(struct http_conns *t, struct http_conn *c);

/* c enters phase from now (libmicrohttpd's thread). c may be NULL. */
void http_conn_enter(struct http_conns *t, struct http_conn *c,
                     enum http_conn_phase phase);

/* One of c's requests authenticated. c may be NULL. */
void http_conn_authenticated(struct http_conns *t, struct http_conn *c);

/* Marks c (may be NULL) as opened past the descriptor budget: its request
 * is answered 503 and the connection closed; its deadlines hold as any
 * other's. MHD's thread, before c's first request. */
void http_conn_set_over_budget(struct http_conn *c);
bool http_conn_is_over_budget(const struct http_conn *c);

/* Shuts down every connection past its deadline, and past the cap the
 * oldest unauthenticated ones that have waited over a second for their
 * headers (any thread); returns how many. */
unsigned http_conns_sweep(struct http_conns *t);

#endif /* TB_HTTP_CONNS_H */
