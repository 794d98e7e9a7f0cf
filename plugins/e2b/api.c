/* The control plane: the E2B REST API, authenticated with X-API-Key.
 *   create   POST   /v2/sandboxes               {templateID, timeout,
 *                                               envVars, metadata}
 *   connect  POST   /v2/sandboxes/{id}/connect  {timeout}: 200 running,
 *                                               201 resumed from pause
 *   destroy  DELETE /sandboxes/{id}
 *   renew    POST   /sandboxes/{id}/timeout     {timeout}
 *   info     GET    /sandboxes/{id}             metadata, startedAt, endAt
 * Sandbox responses carry the envd version and access token a connection
 * needs; a fresh process gets them again from connect. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "e2b_int.h"

#define TB_E2B_MIN_ENVD "0.1.0"

static int need_key(struct tb_e2b *inst, const char *what, char *errbuf,
                    size_t errlen)
{
	if (inst->api_key)
		return TASKBOX_OK;
	return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_AUTH,
	                   "%s: no E2B API key: the environment variable %s "
	                   "is not set",
	                   what, inst->api_key_env);
}

/* Runs one API call with a JSON body (or none) and a retry on 429. */
int tb_e2b_api_call(struct tb_e2b *inst, const char *method, const char *path,
                    json_t *body, const char *what, struct tb_http_resp *resp,
                    char *errbuf, size_t errlen)
{
	struct curl_slist *headers = NULL;
	struct tb_http_req req = {0};
	char *url = NULL, *text = NULL;
	size_t ulen;
	int rc = need_key(inst, what, errbuf, errlen);

	if (rc != TASKBOX_OK)
		return rc;
	ulen = strlen(inst->api_url) + strlen(path) + 1;
	url = malloc(ulen);
	if (body)
		text = json_dumps(body, JSON_COMPACT);
	if (!url || (body && !text) ||
	    tb_http_header(&headers, "X-API-Key", inst->api_key) != 0 ||
	    tb_http_header(&headers, "Accept", "application/json") != 0 ||
	    (text && tb_http_header(&headers, "Content-Type",
	                            "application/json") != 0) ||
	    !(headers = curl_slist_append(headers, "Expect:"))) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                 "%s: out of memory", what);
		goto out;
	}
	snprintf(url, ulen, "%s%s", inst->api_url, path);
	req.method = method;
	req.url = url;
	req.headers = headers;
	req.body = text;
	req.body_len = text ? strlen(text) : 0;
	req.timeout_ms = inst->request_timeout_s * 1000u;
	req.retry_429 = 1;
	rc = tb_http_run(inst, &req, resp, errbuf, errlen);
out:
	curl_slist_free_all(headers);
	free(text);
	free(url);
	return rc;
}

int tb_e2b_api_create(struct tb_e2b *inst, const char *template_name,
                      uint32_t lifetime_s, const char *owner, char *id,
                      char *errbuf, size_t errlen)
{
	struct tb_http_resp resp = {0};
	json_t *body, *meta, *root = NULL;
	const char *sid, *ver;
	int rc;

	meta = json_pack("{s:s}", TB_E2B_META_TAG, TB_E2B_META_TAG_VALUE);
	if (meta && owner && *owner &&
	    json_object_set_new(meta, TB_E2B_META_OWNER, json_string(owner)) !=
	        0) {
		json_decref(meta);
		meta = NULL;
	}
	body = meta ? json_pack("{s:s, s:I, s:o}", "templateID", template_name,
	                        "timeout", (json_int_t)lifetime_s, "metadata",
	                        meta)
	            : NULL;
	if (body && inst->env_json &&
	    json_object_set_new(body, "envVars",
	                        json_loads(inst->env_json, 0, NULL)) != 0) {
		json_decref(body);
		body = NULL;
	}
	if (!body)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "create: out of memory");
	rc = tb_e2b_api_call(inst, "POST", "/v2/sandboxes", body, "create",
	                     &resp, errbuf, errlen);
	json_decref(body);
	if (rc != TASKBOX_OK)
		goto out;
	if (resp.status != 201 && resp.status != 200) {
		rc = tb_http_fail(inst, NULL, &resp, 0, "create", errbuf,
		                  errlen);
		goto out;
	}
	root = json_loadb(resp.body ? resp.body : "", resp.len, 0, NULL);
	sid = json_string_value(json_object_get(root, "sandboxID"));
	ver = json_string_value(json_object_get(root, "envdVersion"));
	if (!tb_e2b_valid_id(sid) || !ver) {
		rc = tb_e2b_fail(errbuf, errlen, inst->api_key, NULL,
		                 TASKBOX_E_PROTOCOL,
		                 "create: the answer has no valid sandboxID "
		                 "and envdVersion");
		goto out;
	}
	snprintf(id, TASKBOX_SANDBOX_ID_MAX, "%s", sid);
	if (tb_e2b_version_cmp(ver, TB_E2B_MIN_ENVD) < 0) {
		char ignored[TASKBOX_ERRBUF_SIZE];
		tb_e2b_api_destroy(inst, id, ignored, sizeof ignored);
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                 TASKBOX_E_UNSUPPORTED,
		                 "create: template %s runs envd %s, older than "
		                 "%s: rebuild the template",
		                 template_name, ver, TB_E2B_MIN_ENVD);
		id[0] = '\0';
	}
out:
	json_decref(root);
	tb_http_resp_free(&resp);
	return rc;
}

/* Fills conn from a Sandbox object. */
static int take_sandbox(struct tb_e2b *inst, json_t *root, const char *id,
                        struct tb_e2b_conn *conn, char *errbuf, size_t errlen)
{
	const char *ver =
	    json_string_value(json_object_get(root, "envdVersion"));
	const char *tok =
	    json_string_value(json_object_get(root, "envdAccessToken"));
	const char *dom = json_string_value(json_object_get(root, "domain"));
	size_t n;

	if (!ver)
		return tb_e2b_fail(
		    errbuf, errlen, inst->api_key, NULL, TASKBOX_E_PROTOCOL,
		    "connect %s: the answer has no envdVersion", id);
	if (tb_e2b_version_cmp(ver, TB_E2B_MIN_ENVD) < 0)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_UNSUPPORTED,
		                   "connect %s: envd %s is older than %s", id,
		                   ver, TB_E2B_MIN_ENVD);
	conn->legacy_user = tb_e2b_version_cmp(ver, "0.4.0") < 0;
	conn->octet_upload = tb_e2b_version_cmp(ver, "0.5.7") >= 0;
	if (tok && *tok && !(conn->access_token = strdup(tok)))
		goto nomem;
	if (!dom || !*dom)
		dom = inst->domain;
	if (inst->sandbox_url) {
		conn->envd_url = strdup(inst->sandbox_url);
	} else {
		n = strlen(id) + strlen(dom) + 32;
		conn->envd_url = malloc(n);
		if (conn->envd_url)
			snprintf(conn->envd_url, n, "https://%d-%s.%s",
			         TB_E2B_ENVD_PORT, id, dom);
	}
	if (!conn->envd_url)
		goto nomem;
	snprintf(conn->id, sizeof conn->id, "%s", id);
	return TASKBOX_OK;
nomem:
	return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
	                   "connect %s: out of memory", id);
}

int tb_e2b_api_connect(struct tb_e2b *inst, const char *id,
                       struct tb_e2b_conn *conn, char *errbuf, size_t errlen)
{
	struct tb_http_resp resp = {0};
	char path[TASKBOX_SANDBOX_ID_MAX + 32];
	json_t *body, *root = NULL;
	int rc;

	if (!tb_e2b_valid_id(id))
		return tb_e2b_fail(
		    errbuf, errlen, NULL, NULL, TASKBOX_E_INVALID,
		    "connect: sandbox id must be 1..127 bytes of "
		    "[A-Za-z0-9_.-]");
	snprintf(path, sizeof path, "/v2/sandboxes/%s/connect", id);
	body =
	    json_pack("{s:I}", "timeout", (json_int_t)inst->default_lifetime_s);
	if (!body)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "connect: out of memory");
	rc = tb_e2b_api_call(inst, "POST", path, body, "connect", &resp, errbuf,
	                     errlen);
	json_decref(body);
	if (rc != TASKBOX_OK)
		goto out;
	if (resp.status != 200 && resp.status != 201) {
		rc = tb_http_fail(inst, NULL, &resp, 0, "connect", errbuf,
		                  errlen);
		goto out;
	}
	root = json_loadb(resp.body ? resp.body : "", resp.len, 0, NULL);
	if (!json_is_object(root)) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_PROTOCOL,
		                 "connect %s: the answer is not a JSON object",
		                 id);
		goto out;
	}
	rc = take_sandbox(inst, root, id, conn, errbuf, errlen);
	if (rc == TASKBOX_OK && resp.status == 201) {
		char line[200];
		snprintf(line, sizeof line, "sandbox %s resumed from pause",
		         id);
		inst->host->log(TASKBOX_LOG_INFO, TB_E2B_NAME, line);
	}
out:
	json_decref(root);
	tb_http_resp_free(&resp);
	return rc;
}

int tb_e2b_api_destroy(struct tb_e2b *inst, const char *id, char *errbuf,
                       size_t errlen)
{
	struct tb_http_resp resp = {0};
	char path[TASKBOX_SANDBOX_ID_MAX + 32];
	int rc;

	if (!tb_e2b_valid_id(id))
		return tb_e2b_fail(
		    errbuf, errlen, NULL, NULL, TASKBOX_E_INVALID,
		    "destroy: sandbox id must be 1..127 bytes of "
		    "[A-Za-z0-9_.-]");
	snprintf(path, sizeof path, "/sandboxes/%s", id);
	rc = tb_e2b_api_call(inst, "DELETE", path, NULL, "destroy", &resp,
	                     errbuf, errlen);
	if (rc == TASKBOX_OK && resp.status != 204 && resp.status != 200)
		rc = tb_http_fail(inst, NULL, &resp, 0, "destroy", errbuf,
		                  errlen);
	tb_http_resp_free(&resp);
	return rc;
}

int tb_e2b_api_renew(struct tb_e2b *inst, const char *id, uint32_t lifetime_s,
                     char *errbuf, size_t errlen)
{
	struct tb_http_resp resp = {0};
	char path[TASKBOX_SANDBOX_ID_MAX + 32];
	json_t *body;
	int rc;

	snprintf(path, sizeof path, "/sandboxes/%s/timeout", id);
	body = json_pack("{s:I}", "timeout", (json_int_t)lifetime_s);
	if (!body)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                   "renew: out of memory");
	rc = tb_e2b_api_call(inst, "POST", path, body, "renew", &resp, errbuf,
	                     errlen);
	json_decref(body);
	if (rc == TASKBOX_OK && resp.status != 204 && resp.status != 200)
		rc =
		    tb_http_fail(inst, NULL, &resp, 0, "renew", errbuf, errlen);
	tb_http_resp_free(&resp);
	return rc;
}

int tb_e2b_api_info(struct tb_e2b *inst, const char *id,
                    struct tb_e2b_info *info, char *errbuf, size_t errlen)
{
	struct tb_http_resp resp = {0};
	char path[TASKBOX_SANDBOX_ID_MAX + 32];
	char sid[TASKBOX_SANDBOX_ID_MAX];
	json_t *root = NULL;
	int rc;

	snprintf(path, sizeof path, "/sandboxes/%s", id);
	rc = tb_e2b_api_call(inst, "GET", path, NULL, "describe", &resp, errbuf,
	                     errlen);
	if (rc != TASKBOX_OK)
		goto out;
	if (resp.status != 200) {
		rc = tb_http_fail(inst, NULL, &resp, 0, "describe", errbuf,
		                  errlen);
		/* The connection's sandbox is gone. */
		if (rc == TASKBOX_E_NOT_FOUND)
			rc = TASKBOX_E_GONE;
		goto out;
	}
	root = json_loadb(resp.body ? resp.body : "", resp.len, 0, NULL);
	memset(info, 0, sizeof *info);
	if (!json_is_object(root)) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_PROTOCOL,
		                 "describe %s: the answer is not a JSON object",
		                 id);
		goto out;
	}
	/* A sandbox made before taskbox tagged its own has no owner. */
	tb_e2b_info_from_json(root, sid, info);
	info->known = 1;
out:
	json_decref(root);
	tb_http_resp_free(&resp);
	return rc;
}
