/* A listen address "[ADDR:]PORT": an IPv4 literal, a bracketed IPv6
 * literal or "localhost", and a port 0..65535 (0: any free port). */
#ifndef TB_LISTEN_ADDR_H
#define TB_LISTEN_ADDR_H

#include <stdbool.h>
#include <stddef.h>

#define TB_LISTEN_DEFAULT_ADDR "127.0.0.1"

struct tb_listen_addr {
	char addr[64]; /* numeric, without brackets: "127.0.0.1", "::1" */
	unsigned port;
	bool ipv6;
};

/* Parses text into out. Returns 0, or -1 with the rule it broke in why. */
int tb_listen_addr_parse(const char *text, struct tb_listen_addr *out,
                         char *why, size_t whylen);

/* True for 127.0.0.0/8 and ::1. */
bool tb_listen_addr_loopback(const struct tb_listen_addr *a);

/* "HOST:PORT" for a URL: IPv6 addresses in brackets. */
void tb_listen_addr_format(const struct tb_listen_addr *a, unsigned port,
                           char *out, size_t outlen);

#endif /* TB_LISTEN_ADDR_H */
