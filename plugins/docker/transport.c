/* docker provider: HTTP to the engine with libcurl, over a unix socket or
 * tcp (optionally TLS with client certificates), with the API version
 * negotiated once per instance. A fresh easy handle per request keeps
 * concurrent ops on one instance independent; its connection comes from a
 * pooled multi handle (pool.c), so calls reuse the engine's connections. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "docker.h"

int tb_dk_fail(int code, char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

void tb_dk_resp_free(struct tb_dk_resp *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

char *tb_dk_escape(const char *s)
{
	return curl_easy_escape(NULL, s, 0);
}

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
	struct tb_dk_resp *r = arg;
	size_t add = size * n;
	char *nb;

	/* Answers we buffer are small JSON; refuse anything huge. */
	if (r->len + add > (64u << 20))
		return 0;
	nb = realloc(r->body, r->len + add + 1);
	if (!nb)
		return 0;
	memcpy(nb + r->len, p, add);
	r->body = nb;
	r->len += add;
	r->body[r->len] = '\0';
	return add;
}

static void set_transport(struct tb_dk *dk, CURL *h)
{
	char path[4096];

	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
	                 (long)TB_DK_CONNECT_TIMEOUT_MS);
	if (dk->sock_path)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, dk->sock_path);
	if (dk->tls_dir) {
		snprintf(path, sizeof(path), "%s/ca.pem", dk->tls_dir);
		curl_easy_setopt(h, CURLOPT_CAINFO, path);
		snprintf(path, sizeof(path), "%s/cert.pem", dk->tls_dir);
		curl_easy_setopt(h, CURLOPT_SSLCERT, path);
		snprintf(path, sizeof(path), "%s/key.pem", dk->tls_dir);
		curl_easy_setopt(h, CURLOPT_SSLKEY, path);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER,
		                 dk->tls_verify ? 1L : 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST,
		                 dk->tls_verify ? 2L : 0L);
	}
}

int tb_dk_curl_error(struct tb_dk *dk, CURL *h, CURLcode rc, char *errbuf,
                     size_t errlen)
{
	long oserr = 0;

	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr);
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return tb_dk_fail(TASKBOX_E_TIMEOUT, errbuf, errlen,
		                  "the engine at %s did not answer in time",
		                  dk->host_url);
	if (oserr == EACCES || oserr == EPERM)
		return tb_dk_fail(TASKBOX_E_PERMISSION, errbuf, errlen,
		                  "permission denied on the engine at %s: %s",
		                  dk->host_url, strerror((int)oserr));
	if (oserr)
		return tb_dk_fail(TASKBOX_E_UNAVAILABLE, errbuf, errlen,
		                  "cannot reach the engine at %s: %s (%s)",
		                  dk->host_url, curl_easy_strerror(rc),
		                  strerror((int)oserr));
	return tb_dk_fail(TASKBOX_E_UNAVAILABLE, errbuf, errlen,
	                  "cannot talk to the engine at %s: %s", dk->host_url,
	                  curl_easy_strerror(rc));
}

/* Copies the engine's "message" (or the raw body) for an error. */
static void engine_message(const struct tb_dk_resp *r, char *out, size_t n)
{
	json_t *j, *m;

	out[0] = '\0';
	if (!r->body || !r->len) {
		snprintf(out, n, "HTTP %ld", r->status);
		return;
	}
	j = json_loadb(r->body, r->len, 0, NULL);
	m = j ? json_object_get(j, "message") : NULL;
	if (json_is_string(m))
		snprintf(out, n, "%s", json_string_value(m));
	else
		snprintf(out, n, "HTTP %ld: %.200s", r->status, r->body);
	json_decref(j);
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

int tb_dk_http_error(const struct tb_dk_resp *r, const char *what, char *errbuf,
                     size_t errlen)
{
	char msg[400];
	int code;

	engine_message(r, msg, sizeof(msg));
	switch (r->status) {
	case 400:
		code = TASKBOX_E_INVALID;
		break;
	case 401:
		code = TASKBOX_E_AUTH;
		break;
	case 403:
		code = TASKBOX_E_PERMISSION;
		break;
	case 404:
		code = TASKBOX_E_NOT_FOUND;
		break;
	case 409:
		code = TASKBOX_E_GONE;
		break;
	case 429:
		code = TASKBOX_E_RATE_LIMITED;
		break;
	default:
		code = r->status >= 500 ? TASKBOX_E_UNAVAILABLE
		                        : TASKBOX_E_PROTOCOL;
		break;
	}
	return tb_dk_fail(code, errbuf, errlen, "%s: %s", what, msg);
}

CURL *tb_dk_handle(struct tb_dk *dk, const char *path, char *errbuf,
                   size_t errlen)
{
	char *url;
	size_t n;
	CURL *h = curl_easy_init();

	if (!h) {
		tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen,
		           "cannot make a curl handle");
		return NULL;
	}
	n = strlen(dk->base_url) + strlen(dk->api) + strlen(path) + 4;
	url = malloc(n);
	if (!url) {
		curl_easy_cleanup(h);
		tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "out of memory");
		return NULL;
	}
	if (dk->api[0])
		snprintf(url, n, "%s/v%s%s", dk->base_url, dk->api, path);
	else
		snprintf(url, n, "%s%s", dk->base_url, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	free(url); /* libcurl keeps its own copy */
	set_transport(dk, h);
	return h;
}

int tb_dk_perform_all(struct tb_dk *dk, CURL **hs, CURLcode *rcs, size_t n,
                      int (*tick)(void *), void *arg, char *errbuf,
                      size_t errlen)
{
	CURLM *m = tb_dk_pool_take(dk);
	CURLMsg *msg;
	int running = 1, left, code = TASKBOX_OK, broken = 0;

	if (!m)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen,
		                  "cannot make a curl multi handle");
	for (size_t i = 0; i < n; i++) {
		rcs[i] = CURLE_FAILED_INIT;
		curl_multi_add_handle(m, hs[i]);
	}
	while (running) {
		if (curl_multi_perform(m, &running) != CURLM_OK) {
			broken = 1;
			code = tb_dk_fail(TASKBOX_E_INTERNAL, errbuf, errlen,
			                  "curl_multi_perform failed");
			break;
		}
		while ((msg = curl_multi_info_read(m, &left)))
			for (size_t i = 0; i < n; i++)
				if (msg->msg == CURLMSG_DONE &&
				    msg->easy_handle == hs[i])
					rcs[i] = msg->data.result;
		if (!running)
			break;
		curl_multi_poll(m, NULL, 0, 100, NULL);
		if (tick && (code = tick(arg)) != TASKBOX_OK)
			break;
	}
	/* Transfers cut short close their connections; finished ones stay
	 * in m's cache for the next request. */
	for (size_t i = 0; i < n; i++)
		curl_multi_remove_handle(m, hs[i]);
	if (broken)
		curl_multi_cleanup(m);
	else
		tb_dk_pool_give(dk, m);
	return code;
}

int tb_dk_perform(struct tb_dk *dk, CURL *h, int (*tick)(void *), void *arg,
                  char *errbuf, size_t errlen)
{
	CURLcode rc;
	int code = tb_dk_perform_all(dk, &h, &rc, 1, tick, arg, errbuf, errlen);

	if (code == TASKBOX_OK && rc != CURLE_OK)
		code = tb_dk_curl_error(dk, h, rc, errbuf, errlen);
	return code;
}

int tb_dk_request(struct tb_dk *dk, const char *method, const char *path,
                  const char *ctype, const void *body, size_t body_len,
                  struct tb_dk_resp *r, char *errbuf, size_t errlen)
{
	struct curl_slist *hdrs = NULL;
	char ct[128];
	CURL *h;
	int code;

	memset(r, 0, sizeof(*r));
	code = tb_dk_negotiate(dk, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	h = tb_dk_handle(dk, path, errbuf, errlen);
	if (!h)
		return TASKBOX_E_NOMEM;
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)TB_DK_REQUEST_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	if (body) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		hdrs = curl_slist_append(hdrs, ct);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
		                 (curl_off_t)body_len);
	} else if (!strcmp(method, "POST") || !strcmp(method, "PUT")) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	code = tb_dk_perform(dk, h, NULL, NULL, errbuf, errlen);
	if (code == TASKBOX_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	else
		tb_dk_resp_free(r);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	return code;
}

/* Parses "MAJOR.MINOR" into a comparable number (major*1000+minor). */
static long api_num(const char *v)
{
	long maj, min;
	char *end;

	if (!v)
		return -1;
	maj = strtol(v, &end, 10);
	if (*end != '.')
		return -1;
	min = strtol(end + 1, &end, 10);
	if (*end || maj < 0 || min < 0 || min > 999)
		return -1;
	return maj * 1000 + min;
}

/* Keeps the Api-Version header of a /_ping answer. */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	char *out = arg;
	size_t len = size * n, k = strlen("Api-Version:");

	if (len > k && len < k + 32 && !strncasecmp(p, "Api-Version:", k)) {
		p += k;
		len -= k;
		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len && (p[len - 1] == '\r' || p[len - 1] == '\n' ||
		               p[len - 1] == ' '))
			len--;
		snprintf(out, 16, "%.*s", (int)len, p);
	}
	return size * n;
}

/* GET path (unversioned); the body into r, Api-Version into ping_ver. */
static int unversioned(struct tb_dk *dk, const char *path, long timeout_ms,
                       struct tb_dk_resp *r, char *ping_ver, char *errbuf,
                       size_t errlen)
{
	CURL *h = tb_dk_handle(dk, path, errbuf, errlen);
	int code;

	if (!h)
		return TASKBOX_E_NOMEM;
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, ping_ver);
	code = tb_dk_perform(dk, h, NULL, NULL, errbuf, errlen);
	if (code == TASKBOX_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_cleanup(h);
	return code;
}

/* The engine's API version comes from the Api-Version header of GET
 * /_ping (cheap everywhere; podman's /version runs its runtime binaries
 * and takes seconds), else from GET /version, whose MinAPIVersion is then
 * checked too. We use min(engine's, ours). */
static int negotiate_locked(struct tb_dk *dk, char *errbuf, size_t errlen)
{
	struct tb_dk_resp r;
	json_t *j = NULL;
	char ver[16] = "", scratch[16];
	long server = -1, minimum = -1, ours;
	int code;

	memset(&r, 0, sizeof(r));
	dk->api[0] = '\0';
	code = unversioned(dk, "/_ping", TB_DK_CONNECT_TIMEOUT_MS, &r, ver,
	                   errbuf, errlen);
	if (code != TASKBOX_OK)
		goto out;
	server = r.status == 200 ? api_num(ver) : -1;
	if (server < 0) {
		tb_dk_resp_free(&r);
		memset(&r, 0, sizeof(r));
		code = unversioned(dk, "/version", TB_DK_REQUEST_TIMEOUT_MS, &r,
		                   scratch, errbuf, errlen);
		if (code != TASKBOX_OK)
			goto out;
		if (r.status != 200) {
			code = tb_dk_http_error(&r, "GET /version", errbuf,
			                        errlen);
			goto out;
		}
		j = json_loadb(r.body ? r.body : "", r.len, 0, NULL);
		server = api_num(
		    json_string_value(json_object_get(j, "ApiVersion")));
		minimum = api_num(
		    json_string_value(json_object_get(j, "MinAPIVersion")));
	}
	ours = TB_DK_API_MAX_MAJOR * 1000 + TB_DK_API_MAX_MINOR;
	if (server < 0) {
		code = tb_dk_fail(TASKBOX_E_PROTOCOL, errbuf, errlen,
		                  "the engine at %s reports no API version",
		                  dk->host_url);
		goto out;
	}
	if (minimum > ours) {
		code = tb_dk_fail(TASKBOX_E_UNSUPPORTED, errbuf, errlen,
		                  "the engine at %s needs a newer API than "
		                  "%d.%d, the newest this plugin speaks",
		                  dk->host_url, TB_DK_API_MAX_MAJOR,
		                  TB_DK_API_MAX_MINOR);
		goto out;
	}
	if (server > ours)
		server = ours;
	snprintf(dk->api, sizeof(dk->api), "%ld.%ld", server / 1000,
	         server % 1000);
	dk->negotiated = 1;
out:
	json_decref(j);
	tb_dk_resp_free(&r);
	return code;
}

int tb_dk_negotiate(struct tb_dk *dk, char *errbuf, size_t errlen)
{
	int code = TASKBOX_OK;

	pthread_mutex_lock(&dk->lock);
	if (!dk->negotiated)
		code = negotiate_locked(dk, errbuf, errlen);
	pthread_mutex_unlock(&dk->lock);
	return code;
}
