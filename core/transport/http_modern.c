/* Streamable HTTP for MCP 2026-07-28: which POSTs are modern (the body
 * decides), and the checks of their envelope and of the headers that
 * must repeat the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name), with
 * the 400 answers the revision asks for. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcp_era.h"
#include "transport/http_internal.h"

#define B64_OPEN "=?base64?"
#define B64_CLOSE "?="

bool http_modern_message(struct http_exchange *ex, const struct tb_rpc_msg *m)
{
	const char *v = http_header(ex, "MCP-Protocol-Version");

	if (tb_mcp_claims(m->params))
		return true;
	for (int i = 0; v && tb_mcp_modern_versions[i]; i++)
		if (strcmp(v, tb_mcp_modern_versions[i]) == 0)
			return true;
	return false;
}

/* A header's value, its =?base64?...?= form decoded (malloc'd), or NULL
 * when absent; *bad when the encoded form does not decode. */
static char *header_value(struct http_exchange *ex, const char *name, bool *bad)
{
	const char *v = http_header(ex, name);
	size_t len, open = strlen(B64_OPEN), close = strlen(B64_CLOSE);
	unsigned char *raw = NULL;
	size_t n;

	*bad = false;
	if (!v)
		return NULL;
	/* Whitespace around a field value is not part of it (RFC 9110). */
	while (*v == ' ' || *v == '\t')
		v++;
	len = strlen(v);
	while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	if (len < open + close || strncmp(v, B64_OPEN, open) != 0 ||
	    strncmp(v + len - close, B64_CLOSE, close) != 0)
		return strndup(v, len);
	if (tb_base64_decode(v + open, len - open - close, &raw, &n) < 0 ||
	    memchr(raw, '\0', n)) {
		free(raw);
		*bad = true;
		return NULL;
	}
	char *text = realloc(raw, n + 1);
	if (!text) {
		free(raw);
		return NULL;
	}
	text[n] = '\0';
	return text;
}

/* What Mcp-Name must say for method: the member of params that names its
 * target, or NULL when the method has none. */
static const char *name_member(const char *method)
{
	static const struct {
		const char *method, *member;
	} names[] = {
	    {"tools/call", "name"},     {"prompts/get", "name"},
	    {"resources/read", "uri"},  {"tasks/get", "taskId"},
	    {"tasks/update", "taskId"}, {"tasks/cancel", "taskId"},
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(method, names[i].method) == 0)
			return names[i].member;
	return NULL;
}

/* Answers 400 -32020 for header name, which says got (NULL: absent)
 * where the body says want. */
static enum MHD_Result mismatch(struct http_exchange *ex, json_t *id,
                                const char *name, const char *got,
                                const char *want, bool undecodable)
{
	json_t *err = tb_rpc_error(
	    id, TB_RPC_HEADER_MISMATCH,
	    "Bad Request: the request headers and body disagree: header "
	    "%s: %s, where the body says %.256s",
	    name,
	    undecodable ? "its =?base64?...?= form does not decode"
	    : got       ? "differs"
	                : "required",
	    want);
	json_t *data = json_pack("{s:{s:s,s:s?,s:s}}", "mismatch", "name", name,
	                         "header", got, "body", want);

	return http_reply_json(ex, MHD_HTTP_BAD_REQUEST,
	                       tb_rpc_error_data(err, data));
}

/* Checks that header name repeats want; answers (returning false) when
 * it does not. */
static bool repeats(struct http_exchange *ex, json_t *id, const char *name,
                    const char *want, enum MHD_Result *rc)
{
	bool bad;
	char *got = header_value(ex, name, &bad);
	bool same = got && strcmp(got, want) == 0;

	if (!same)
		*rc = mismatch(ex, id, name, got, want, bad);
	free(got);
	return same;
}

bool http_modern_check(struct http_exchange *ex, const struct tb_rpc_msg *m,
                       enum MHD_Result *rc)
{
	json_t *id = m->kind == TB_RPC_REQUEST ? m->id : NULL;
	const char *version = tb_mcp_claimed_version(m->params);
	const char *member;

	/* Headers and body disagreeing comes first (-32020), whatever the
	 * versions are; then the envelope (-32022, -32602). */
	if (version && !repeats(ex, id, "MCP-Protocol-Version", version, rc))
		return false;
	json_t *bad = tb_mcp_envelope_error(id, m->params);
	if (bad) {
		*rc = http_reply_json(ex, MHD_HTTP_BAD_REQUEST, bad);
		return false;
	}
	if (!repeats(ex, id, "Mcp-Method", m->method, rc))
		return false;
	member = name_member(m->method);
	if (!member)
		return true;
	const char *target =
	    json_string_value(json_object_get(m->params, member));
	/* A target that is not a string is the protocol core's to refuse
	 * (-32602); the header cannot repeat it. */
	return !target || repeats(ex, id, "Mcp-Name", target, rc);
}

/* The error code of a reply that is a JSON-RPC error, else 0. The key
 * after the id tells: an id (a number, or a string whose quotes are all
 * escaped) cannot hold `,"error":` or `,"result":`, so the first of the
 * two found is the top level's; no parse of a result. */
static long error_code(const char *reply, size_t len)
{
	static const char err_key[] = ",\"error\":", res_key[] = ",\"result\":";
	const char *r = memmem(reply, len, res_key, sizeof res_key - 1);
	size_t before = r ? (size_t)(r - reply) : len;
	const char *e = memmem(reply, before, err_key, sizeof err_key - 1);
	long code = 0;

	if (!e)
		return 0;
	json_t *msg = json_loadb(reply, len, JSON_ALLOW_NUL, NULL);
	json_t *c = json_object_get(json_object_get(msg, "error"), "code");
	if (json_is_integer(c))
		code = (long)json_integer_value(c);
	json_decref(msg);
	return code;
}

unsigned http_modern_status(const char *reply, size_t len)
{
	switch (error_code(reply, len)) {
	case TB_RPC_METHOD_NOT_FOUND:
		return MHD_HTTP_NOT_FOUND;
	case TB_RPC_HEADER_MISMATCH:
	case TB_RPC_MISSING_CAPABILITY:
	case TB_RPC_UNSUPPORTED_VERSION:
		return MHD_HTTP_BAD_REQUEST;
	default:
		return http_legacy_status(reply, len);
	}
}

unsigned http_legacy_status(const char *reply, size_t len)
{
	return error_code(reply, len) == TB_RPC_SERVER_BUSY
	           ? MHD_HTTP_SERVICE_UNAVAILABLE
	           : MHD_HTTP_OK;
}
