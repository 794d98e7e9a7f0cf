/* Parsing and printing of listen addresses (listen_addr.h). */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/listen_addr.h"

#define RULE                                                                   \
	"must be [ADDR:]PORT with ADDR an IPv4 address, [IPv6] or "            \
	"localhost and PORT 0..65535"

static int fail(char *why, size_t whylen, const char *detail)
{
	if (why && whylen)
		snprintf(why, whylen, "%s (%s)", RULE, detail);
	return -1;
}

/* Parses a decimal port 0..65535 that is all of text. */
static int parse_port(const char *text, unsigned *port)
{
	unsigned long v = 0;

	if (!*text || strlen(text) > 5)
		return -1;
	for (const char *c = text; *c; c++) {
		if (*c < '0' || *c > '9')
			return -1;
		v = v * 10 + (unsigned long)(*c - '0');
	}
	if (v > 65535)
		return -1;
	*port = (unsigned)v;
	return 0;
}

int tb_listen_addr_parse(const char *text, struct tb_listen_addr *out,
                         char *why, size_t whylen)
{
	char host[48];
	const char *port_text;
	unsigned char bin[16];

	memset(out, 0, sizeof *out);
	if (!text || !*text)
		return fail(why, whylen, "empty");
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || close[1] != ':')
			return fail(why, whylen,
			            "an IPv6 address needs "
			            "[ADDR]:PORT");
		if ((size_t)(close - text - 1) >= sizeof host)
			return fail(why, whylen, "address too long");
		memcpy(host, text + 1, (size_t)(close - text - 1));
		host[close - text - 1] = '\0';
		port_text = close + 2;
		if (inet_pton(AF_INET6, host, bin) != 1)
			return fail(why, whylen, "not an IPv6 address");
		out->ipv6 = true;
	} else {
		const char *colon = strrchr(text, ':');
		if (!colon) {
			snprintf(host, sizeof host, "%s",
			         TB_LISTEN_DEFAULT_ADDR);
			port_text = text;
		} else {
			if (strchr(text, ':') != colon)
				return fail(why, whylen,
				            "put an IPv6 address in brackets");
			if ((size_t)(colon - text) >= sizeof host)
				return fail(why, whylen, "address too long");
			memcpy(host, text, (size_t)(colon - text));
			host[colon - text] = '\0';
			port_text = colon + 1;
		}
		if (strcmp(host, "localhost") == 0)
			snprintf(host, sizeof host, "127.0.0.1");
		if (inet_pton(AF_INET, host, bin) != 1)
			return fail(why, whylen, "not an IPv4 address");
	}
	if (parse_port(port_text, &out->port) < 0)
		return fail(why, whylen, "bad port");
	snprintf(out->addr, sizeof out->addr, "%s", host);
	return 0;
}

bool tb_listen_addr_loopback(const struct tb_listen_addr *a)
{
	unsigned char bin[16];

	if (a->ipv6)
		return inet_pton(AF_INET6, a->addr, bin) == 1 &&
		       memcmp(bin, &in6addr_loopback, 16) == 0;
	return inet_pton(AF_INET, a->addr, bin) == 1 && bin[0] == 127;
}

void tb_listen_addr_format(const struct tb_listen_addr *a, unsigned port,
                           char *out, size_t outlen)
{
	snprintf(out, outlen, a->ipv6 ? "[%s]:%u" : "%s:%u", a->addr, port);
}
