/* REST calls to the apiserver: one libcurl easy handle per request, taken
 * from a small pool so that connections are reused, with the cluster's TLS
 * and credentials, a deadline, one retry of a 401 after re-reading the
 * token, and bounded retries of a 429 where Retry-After says. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "k8s_int.h"

#define BODY_CAP (16 * 1024 * 1024)
#define MAX_429_RETRIES 3
#define MAX_RETRY_AFTER_S 10

struct collect {
	struct tb_k8s_resp *resp;
	int nomem;
	long retry_after;
};

static size_t on_body(char *p, size_t size, size_t nmemb, void *arg)
{
	struct collect *c = arg;
	size_t n = size * nmemb;
	char *grown;

	if (c->resp->len + n > BODY_CAP)
		return 0;
	grown = realloc(c->resp->body, c->resp->len + n + 1);
	if (!grown) {
		c->nomem = 1;
		return 0;
	}
	memcpy(grown + c->resp->len, p, n);
	c->resp->body = grown;
	c->resp->len += n;
	grown[c->resp->len] = '\0';
	return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct collect *c = arg;
	size_t n = size * nmemb;

	if (n > 12 && strncasecmp(p, "Retry-After:", 12) == 0)
		c->retry_after = strtol(p + 12, NULL, 10);
	return n;
}

int tb_k8s_curl_setup(struct tb_k8s *inst, CURL *easy)
{
	struct tb_k8s_cluster *cl = &inst->cl;

	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS,
	                 (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
	                 (long)inst->request_timeout_s * 1000L);
	curl_easy_setopt(easy, CURLOPT_USERAGENT,
	                 "taskbox-k8s/" PACKAGE_VERSION);
	if (cl->ca_data) {
		struct curl_blob b = {cl->ca_data, cl->ca_len,
		                      CURL_BLOB_NOCOPY};
		curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &b);
	} else if (cl->ca_file) {
		curl_easy_setopt(easy, CURLOPT_CAINFO, cl->ca_file);
	}
	if (cl->cert_data) {
		struct curl_blob b = {cl->cert_data, cl->cert_len,
		                      CURL_BLOB_NOCOPY};
		curl_easy_setopt(easy, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (cl->cert_file) {
		curl_easy_setopt(easy, CURLOPT_SSLCERT, cl->cert_file);
	}
	if (cl->key_data) {
		struct curl_blob b = {cl->key_data, cl->key_len,
		                      CURL_BLOB_NOCOPY};
		curl_easy_setopt(easy, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (cl->key_file) {
		curl_easy_setopt(easy, CURLOPT_SSLKEY, cl->key_file);
	}
	if (cl->insecure) {
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (cl->proxy)
		curl_easy_setopt(easy, CURLOPT_PROXY, cl->proxy);
	return 0;
}

static CURL *pool_take(struct tb_k8s *inst)
{
	CURL *easy = NULL;

	pthread_mutex_lock(&inst->pool_lock);
	if (inst->npool)
		easy = inst->pool[--inst->npool];
	pthread_mutex_unlock(&inst->pool_lock);
	if (easy) {
		curl_easy_reset(easy);
		return easy;
	}
	return curl_easy_init();
}

static void pool_give(struct tb_k8s *inst, CURL *easy)
{
	pthread_mutex_lock(&inst->pool_lock);
	if (inst->npool < sizeof inst->pool / sizeof inst->pool[0]) {
		inst->pool[inst->npool++] = easy;
		easy = NULL;
	}
	pthread_mutex_unlock(&inst->pool_lock);
	if (easy)
		curl_easy_cleanup(easy);
}

void tb_k8s_pool_free(struct tb_k8s *inst)
{
	while (inst->npool)
		curl_easy_cleanup(inst->pool[--inst->npool]);
}

void tb_k8s_resp_free(struct tb_k8s_resp *resp)
{
	free(resp->body);
	memset(resp, 0, sizeof *resp);
}

/* Appends one header line to *list; 0, or -1 on no memory. */
static int append(struct curl_slist **list, const char *line)
{
	struct curl_slist *next = curl_slist_append(*list, line);

	if (!next)
		return -1;
	*list = next;
	return 0;
}

/* One attempt; *retry_after gets the header's seconds (or -1). */
static int attempt(struct tb_k8s *inst, const char *method, const char *url,
                   const char *body, const char *content_type,
                   struct tb_k8s_resp *resp, long *retry_after, char *errbuf,
                   size_t errlen)
{
	CURL *easy = pool_take(inst);
	struct curl_slist *h = NULL;
	struct collect col = {resp, 0, -1};
	char auth[8192], ctype[128], cerr[CURL_ERROR_SIZE] = "";
	CURLcode cc;
	int rc = TASKBOX_OK;

	if (!easy)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	tb_k8s_curl_setup(inst, easy);
	tb_k8s_auth_header(&inst->cl, auth, sizeof auth);
	snprintf(ctype, sizeof ctype, "Content-Type: %s",
	         content_type ? content_type : "application/json");
	if ((auth[0] && append(&h, auth) != 0) ||
	    append(&h, "Accept: application/json") != 0 ||
	    (body && append(&h, ctype) != 0)) {
		curl_slist_free_all(h);
		pool_give(inst, easy);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	}
	curl_easy_setopt(easy, CURLOPT_URL, url);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, &col);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, &col);
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
	                 (long)inst->request_timeout_s * 1000L);
	if (body) {
		curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
		                 (curl_off_t)strlen(body));
	}
	if (strcmp(method, "GET") != 0)
		curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
	cc = curl_easy_perform(easy);
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &resp->status);
	if (col.nomem)
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                 "out of memory");
	else if (cc == CURLE_OPERATION_TIMEDOUT)
		rc =
		    tb_k8s_fail(errbuf, errlen, TASKBOX_E_TIMEOUT,
		                "%s %s: the apiserver did not answer within "
		                "%u s",
		                method, url, (unsigned)inst->request_timeout_s);
	else if (cc != CURLE_OK)
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_UNAVAILABLE,
		                 "cannot reach the apiserver at %s: %s",
		                 inst->cl.server,
		                 cerr[0] ? cerr : curl_easy_strerror(cc));
	*retry_after = col.retry_after;
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	memset(auth, 0, sizeof auth);
	pool_give(inst, easy);
	return rc;
}

int tb_k8s_rest(struct tb_k8s *inst, const char *method, const char *path,
                const char *body, const char *content_type,
                struct tb_k8s_resp *resp, char *errbuf, size_t errlen)
{
	size_t n = strlen(inst->cl.server) + strlen(path) + 1;
	char *url = malloc(n);
	int rc, tries_429 = 0, reauthed = 0;
	long retry_after;

	if (!url)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	snprintf(url, n, "%s%s", inst->cl.server, path);
	for (;;) {
		memset(resp, 0, sizeof *resp);
		rc = attempt(inst, method, url, body, content_type, resp,
		             &retry_after, errbuf, errlen);
		if (rc != TASKBOX_OK)
			break;
		if (resp->status == 401 && !reauthed &&
		    tb_k8s_token_reload(&inst->cl)) {
			reauthed = 1;
			tb_k8s_resp_free(resp);
			continue;
		}
		if (resp->status == 429 && tries_429 < MAX_429_RETRIES) {
			tries_429++;
			if (retry_after < 1)
				retry_after = 1;
			if (retry_after > MAX_RETRY_AFTER_S)
				retry_after = MAX_RETRY_AFTER_S;
			tb_k8s_resp_free(resp);
			sleep((unsigned)retry_after);
			continue;
		}
		break;
	}
	if (rc != TASKBOX_OK)
		tb_k8s_resp_free(resp);
	free(url);
	return rc;
}

int tb_k8s_rest_fail(const struct tb_k8s_resp *resp, const char *what,
                     char *errbuf, size_t errlen)
{
	char msg[400];
	int code = tb_k8s_http_code(resp->status);

	tb_k8s_status_message(resp->body, resp->len, msg, sizeof msg);
	if (resp->status == 401)
		return tb_k8s_fail(errbuf, errlen, code,
		                   "%s: HTTP 401: the apiserver rejected the "
		                   "credentials (%s)",
		                   what, msg[0] ? msg : "no message");
	if (resp->status == 429)
		return tb_k8s_fail(errbuf, errlen, code,
		                   "%s: HTTP 429: the apiserver kept asking to "
		                   "slow down (%s)",
		                   what, msg[0] ? msg : "no message");
	return tb_k8s_fail(errbuf, errlen, code, "%s: HTTP %ld: %s", what,
	                   resp->status, msg[0] ? msg : "no message");
}
