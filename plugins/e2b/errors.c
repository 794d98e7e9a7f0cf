/* Error messages and the mapping of the service's statuses to ABI codes. */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "e2b_int.h"

/* Replaces every occurrence of secret in msg with "****", in place. */
static void scrub(char *msg, const char *secret)
{
	size_t slen, put;
	char *from = msg, *at;

	if (!secret || !*secret)
		return;
	slen = strlen(secret);
	put = slen < 4 ? slen : 4;
	while ((at = strstr(from, secret)) != NULL) {
		memset(at, '*', put);
		if (slen > put)
			memmove(at + put, at + slen, strlen(at + slen) + 1);
		from = at + put;
	}
}

int tb_e2b_fail(char *errbuf, size_t errlen, const char *secret1,
                const char *secret2, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	char *p;

	if (!errbuf || errlen == 0)
		return code;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* Scrub before truncating, so no prefix of a secret survives. */
	scrub(msg, secret1);
	scrub(msg, secret2);
	for (p = msg; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	snprintf(errbuf, errlen, "%s", msg);
	return code;
}

int tb_e2b_http_code(long status, int envd_plane)
{
	switch (status) {
	case 400:
	case 422:
		return TASKBOX_E_INVALID;
	case 401:
		return TASKBOX_E_AUTH;
	case 403:
		return TASKBOX_E_PERMISSION;
	case 404:
		return TASKBOX_E_NOT_FOUND;
	case 408:
	case 504:
		return TASKBOX_E_TIMEOUT;
	case 409:
		return TASKBOX_E_UNAVAILABLE;
	case 410:
		return TASKBOX_E_GONE;
	case 429:
		return TASKBOX_E_RATE_LIMITED;
	case 501:
		return TASKBOX_E_UNSUPPORTED;
	case 502:
		/* The sandbox proxy's "the sandbox was not found". */
		return envd_plane ? TASKBOX_E_GONE : TASKBOX_E_UNAVAILABLE;
	case 507:
		return TASKBOX_E_IO;
	default:
		if (status >= 500)
			return TASKBOX_E_UNAVAILABLE;
		return TASKBOX_E_PROTOCOL;
	}
}

int tb_e2b_connect_code(const char *name)
{
	static const struct {
		const char *name;
		int code;
	} map[] = {
	    {"canceled", TASKBOX_E_CANCELLED},
	    {"invalid_argument", TASKBOX_E_INVALID},
	    {"failed_precondition", TASKBOX_E_INVALID},
	    {"out_of_range", TASKBOX_E_INVALID},
	    {"deadline_exceeded", TASKBOX_E_TIMEOUT},
	    {"not_found", TASKBOX_E_NOT_FOUND},
	    {"already_exists", TASKBOX_E_INVALID},
	    {"permission_denied", TASKBOX_E_PERMISSION},
	    {"resource_exhausted", TASKBOX_E_RATE_LIMITED},
	    {"aborted", TASKBOX_E_UNAVAILABLE},
	    {"unimplemented", TASKBOX_E_UNSUPPORTED},
	    {"unavailable", TASKBOX_E_UNAVAILABLE},
	    {"unauthenticated", TASKBOX_E_AUTH},
	    {"internal", TASKBOX_E_UNAVAILABLE},
	    {"data_loss", TASKBOX_E_IO},
	};
	size_t i;

	for (i = 0; name && i < sizeof map / sizeof map[0]; i++)
		if (strcmp(name, map[i].name) == 0)
			return map[i].code;
	return TASKBOX_E_PROTOCOL;
}

void tb_e2b_service_message(const char *body, size_t len, char *out,
                            size_t outlen)
{
	json_t *root;
	const char *msg = NULL;
	size_t i, n = 0;

	if (outlen == 0)
		return;
	out[0] = '\0';
	if (!body || len == 0)
		return;
	root = json_loadb(body, len, 0, NULL);
	if (root) {
		json_t *m = json_object_get(root, "message");
		if (!json_is_string(m)) {
			json_t *e = json_object_get(root, "error");
			m = json_object_get(e, "message");
		}
		if (json_is_string(m))
			snprintf(out, outlen, "%s", json_string_value(m));
		json_decref(root);
		if (out[0])
			return;
	}
	/* Plain text: its first line, printable bytes only. */
	msg = body;
	for (i = 0; i < len && n + 1 < outlen && n < 200; i++) {
		unsigned char c = (unsigned char)msg[i];
		if (c == '\n' || c == '\r')
			break;
		out[n++] = isprint(c) ? (char)c : '?';
	}
	out[n] = '\0';
}

int tb_e2b_valid_id(const char *id)
{
	size_t n;

	if (!id)
		return 0;
	for (n = 0; id[n]; n++) {
		unsigned char c = (unsigned char)id[n];
		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return 0;
		if (n + 1 >= TASKBOX_SANDBOX_ID_MAX)
			return 0;
	}
	return n > 0;
}

int tb_e2b_version_cmp(const char *a, const char *b)
{
	int i;

	for (i = 0; i < 3; i++) {
		long x = strtol(a, (char **)&a, 10);
		long y = strtol(b, (char **)&b, 10);
		if (x != y)
			return x < y ? -1 : 1;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
	}
	return 0;
}
