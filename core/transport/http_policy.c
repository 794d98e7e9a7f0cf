/* The Origin and Host checks of http_policy.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transport/http_policy.h"

/* Splits "host[:port]" (host may be "[v6]") into host and port ("" when
 * absent). Returns -1 when malformed or too long. */
static int split_host(const char *text, size_t len, char *host, size_t hlen,
                      char *port, size_t plen)
{
	const char *colon = NULL;
	size_t h;

	if (len == 0)
		return -1;
	if (text[0] == '[') {
		const char *close = memchr(text, ']', len);
		if (!close)
			return -1;
		h = (size_t)(close - text) + 1;
		if (h < len) {
			if (text[h] != ':')
				return -1;
			colon = text + h;
		}
	} else {
		colon = memchr(text, ':', len);
		h = colon ? (size_t)(colon - text) : len;
		if (colon && memchr(colon + 1, ':', len - h - 1))
			return -1;
	}
	size_t p = colon ? len - h - 1 : 0;
	if (h == 0 || h >= hlen || p >= plen || (colon && p == 0))
		return -1;
	memcpy(host, text, h);
	host[h] = '\0';
	memcpy(port, colon ? colon + 1 : "", p);
	port[p] = '\0';
	for (size_t i = 0; i < p; i++)
		if (port[i] < '0' || port[i] > '9')
			return -1;
	return 0;
}

/* Whether "host[:port]" value matches entry ("host" any port, or
 * "host:port"). */
static bool host_matches(const char *value, size_t vlen, const char *entry)
{
	char vh[256], vp[8], eh[256], ep[8];

	if (split_host(value, vlen, vh, sizeof vh, vp, sizeof vp) < 0 ||
	    split_host(entry, strlen(entry), eh, sizeof eh, ep, sizeof ep) < 0)
		return false;
	return strcasecmp(vh, eh) == 0 && (!*ep || strcmp(vp, ep) == 0);
}

static const char *const loopback_names[] = {"localhost", "127.0.0.1", "[::1]"};
#define N_LOOPBACK (sizeof loopback_names / sizeof *loopback_names)

bool tb_http_host_allowed(const char *host, const char *const *allowed,
                          size_t n, const char *listen)
{
	size_t len;

	if (!host)
		return false;
	len = strlen(host);
	if (listen && host_matches(host, len, listen))
		return true;
	if (n == 0) {
		allowed = loopback_names;
		n = N_LOOPBACK;
	}
	for (size_t i = 0; i < n; i++)
		if (host_matches(host, len, allowed[i]))
			return true;
	return false;
}

/* Whether origin "scheme://host[:port]" matches entry of the same form. */
static bool origin_matches(const char *origin, const char *entry)
{
	const char *o = strstr(origin, "://"), *e = strstr(entry, "://");

	if (!o || !e || o - origin != e - entry ||
	    strncasecmp(origin, entry, (size_t)(o - origin)) != 0)
		return false;
	o += 3;
	e += 3;
	if (strchr(o, '/') || strchr(e, '/'))
		return false;
	return host_matches(o, strlen(o), e);
}

bool tb_http_origin_allowed(const char *origin, const char *const *allowed,
                            size_t n)
{
	static const char *const schemes[] = {"http://", "https://"};
	char entry[64];

	if (!origin)
		return false;
	if (n > 0) {
		for (size_t i = 0; i < n; i++)
			if (origin_matches(origin, allowed[i]))
				return true;
		return false;
	}
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < N_LOOPBACK; i++) {
			snprintf(entry, sizeof entry, "%s%s", schemes[s],
			         loopback_names[i]);
			if (origin_matches(origin, entry))
				return true;
		}
	return false;
}
