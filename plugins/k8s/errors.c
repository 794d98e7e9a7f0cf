/* Error messages and the mapping of the apiserver's answers to ABI codes. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "../common/error_message.h"
#include "../common/http_status.h"
#include "k8s_int.h"

int tb_k8s_fail(char *errbuf, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tb_error_message_v(errbuf, errlen, NULL, NULL, fmt, ap);
	va_end(ap);
	return code;
}

/* Where the apiserver's answers part from the shared status table: a
 * conflict (409) and an unsupported media type (415) are invalid
 * requests. */
static const struct tb_http_status_override apiserver_overrides[] = {
    {409, TASKBOX_E_INVALID},
    {415, TASKBOX_E_INVALID},
};

int tb_k8s_http_code(long status)
{
	return tb_http_status_code(status, apiserver_overrides,
	                           sizeof apiserver_overrides /
	                               sizeof apiserver_overrides[0]);
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
