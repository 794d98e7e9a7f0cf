/* Error messages and the mapping of the service's statuses to ABI codes. */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../common/error_message.h"
#include "../common/http_status.h"
#include "e2b_int.h"

int tb_e2b_fail(char *errbuf, size_t errlen, const char *secret1,
                const char *secret2, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tb_error_message_v(errbuf, errlen, secret1, secret2, fmt, ap);
	va_end(ap);
	return code;
}

/* Where e2b parts from the shared status table on the control plane:
 * 409 is unavailable, 501 unsupported and 507 an I/O error. */
static const struct tb_http_status_override control_plane_overrides[] = {
    {409, TASKBOX_E_UNAVAILABLE},
    {501, TASKBOX_E_UNSUPPORTED},
    {507, TASKBOX_E_IO},
};

/* The same on envd's plane, plus the sandbox proxy's 502, "the sandbox was
 * not found": gone. */
static const struct tb_http_status_override envd_plane_overrides[] = {
    {409, TASKBOX_E_UNAVAILABLE},
    {501, TASKBOX_E_UNSUPPORTED},
    {502, TASKBOX_E_GONE},
    {507, TASKBOX_E_IO},
};

int tb_e2b_http_code(long status, int envd_plane)
{
	if (envd_plane)
		return tb_http_status_code(status, envd_plane_overrides,
		                           sizeof envd_plane_overrides /
		                               sizeof envd_plane_overrides[0]);
	return tb_http_status_code(status, control_plane_overrides,
	                           sizeof control_plane_overrides /
	                               sizeof control_plane_overrides[0]);
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
