/* Error messages and the mapping of the apiserver's answers to ABI codes. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "k8s_int.h"

int tb_k8s_fail(char *errbuf, size_t errlen, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	char *p;

	if (!errbuf || errlen == 0)
		return code;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	for (p = msg; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	snprintf(errbuf, errlen, "%s", msg);
	return code;
}

int tb_k8s_http_code(long status)
{
	switch (status) {
	case 400:
	case 409:
	case 415:
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
	case 410:
		return TASKBOX_E_GONE;
	case 429:
		return TASKBOX_E_RATE_LIMITED;
	default:
		if (status >= 500)
			return TASKBOX_E_UNAVAILABLE;
		return TASKBOX_E_PROTOCOL;
	}
}

void tb_k8s_status_message(const char *body, size_t len, char *out,
                           size_t outlen)
{
	json_t *st;
	const char *m;
	size_t n;

	if (outlen == 0)
		return;
	out[0] = '\0';
	if (!body || len == 0)
		return;
	st = json_loadb(body, len, 0, NULL);
	m = json_string_value(json_object_get(st, "message"));
	if (m) {
		snprintf(out, outlen, "%s", m);
		json_decref(st);
		return;
	}
	json_decref(st);
	for (n = 0; n < len && body[n] != '\n' && body[n] != '\r'; n++)
		;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, body, n);
	out[n] = '\0';
}
