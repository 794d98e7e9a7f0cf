/* The HTTP layer of both planes: one libcurl easy handle per request, driven
 * through a multi handle so that the caller's tick runs at least every
 * 100 ms (cancellation, exec deadlines), a deadline on every request, and
 * bounded retries of a 429 that says when to come back. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "e2b_int.h"

#define TB_HTTP_BODY_CAP (1024 * 1024) /* collected bodies: JSON, errors */
#define TB_HTTP_MAX_RETRIES 3
#define TB_HTTP_MAX_RETRY_AFTER_S 30

struct run_state {
	const struct tb_http_req *req;
	struct tb_http_resp *resp;
	CURL *easy;
	int sink_rc;  /* what the sink said when it stopped the transfer */
	int stopped;  /* the sink ended the transfer early on purpose */
	int finished; /* batch: the transfer is over */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int tb_http_header(struct curl_slist **list, const char *name,
                   const char *value)
{
	char line[1024];
	struct curl_slist *next;
	int n = snprintf(line, sizeof line, "%s: %s", name, value);

	if (n < 0 || (size_t)n >= sizeof line)
		return -1;
	next = curl_slist_append(*list, line);
	if (!next)
		return -1;
	*list = next;
	return 0;
}

void tb_http_resp_free(struct tb_http_resp *resp)
{
	free(resp->body);
	memset(resp, 0, sizeof *resp);
}

static void resp_reset(struct tb_http_resp *resp)
{
	tb_http_resp_free(resp);
	resp->content_length = -1;
}

static int collect(struct tb_http_resp *resp, const char *p, size_t n)
{
	char *grown;

	if (resp->len >= TB_HTTP_BODY_CAP)
		return 0; /* the rest is read and dropped */
	if (n > TB_HTTP_BODY_CAP - resp->len)
		n = TB_HTTP_BODY_CAP - resp->len;
	grown = realloc(resp->body, resp->len + n + 1);
	if (!grown)
		return -1;
	memcpy(grown + resp->len, p, n);
	resp->body = grown;
	resp->len += n;
	resp->body[resp->len] = '\0';
	return 0;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *arg)
{
	struct run_state *st = arg;
	size_t n = size * nmemb;

	if (st->resp->status == 0)
		curl_easy_getinfo(st->easy, CURLINFO_RESPONSE_CODE,
		                  &st->resp->status);
	if (st->req->sink && st->resp->status >= 200 &&
	    st->resp->status < 300) {
		int rc = st->req->sink(st->req->ctx, (unsigned char *)p, n);
		if (rc == 0)
			return n;
		st->stopped = rc < 0;
		st->sink_rc = rc < 0 ? TASKBOX_OK : rc;
		return 0; /* ends the transfer */
	}
	if (collect(st->resp, p, n) != 0) {
		st->sink_rc = TASKBOX_E_NOMEM;
		return 0;
	}
	return n;
}

static void copy_value(char *dst, size_t dstlen, const char *v, size_t n)
{
	while (n > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	while (n > 0 &&
	       (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
		n--;
	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct run_state *st = arg;
	size_t n = size * nmemb;

	if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		/* A new response (after a 100 Continue): forget the last. */
		st->resp->content_range[0] = '\0';
		st->resp->retry_after[0] = '\0';
		st->resp->next_token[0] = '\0';
		st->resp->status = 0;
	} else if (n > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		copy_value(st->resp->retry_after, sizeof st->resp->retry_after,
		           p + 12, n - 12);
	} else if (n > 14 && strncasecmp(p, "Content-Range:", 14) == 0) {
		copy_value(st->resp->content_range,
		           sizeof st->resp->content_range, p + 14, n - 14);
	} else if (n > 13 && strncasecmp(p, "X-Next-Token:", 13) == 0) {
		copy_value(st->resp->next_token, sizeof st->resp->next_token,
		           p + 13, n - 13);
	}
	return n;
}

static int setup(struct tb_e2b *inst, const struct tb_http_req *req,
                 struct run_state *st, CURL *easy)
{
	long connect_ms = (long)inst->request_timeout_s * 1000L;

	if (req->timeout_ms && (long)req->timeout_ms < connect_ms)
		connect_ms = (long)req->timeout_ms;
	if (curl_easy_setopt(easy, CURLOPT_URL, req->url) != CURLE_OK)
		return -1;
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS,
	                 (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, req->headers);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, st);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, st);
	curl_easy_setopt(easy, CURLOPT_USERAGENT,
	                 "taskbox-e2b/" PACKAGE_VERSION);
	if (req->mime) {
		curl_easy_setopt(easy, CURLOPT_MIMEPOST, req->mime);
	} else if (req->body) {
		curl_easy_setopt(easy, CURLOPT_POSTFIELDS, req->body);
		curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
		                 (curl_off_t)req->body_len);
	}
	if (strcmp(req->method, "GET") != 0)
		curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, req->method);
	return 0;
}

/* What a finished transfer (libcurl's result done) means for its request:
 * an ABI code, OK when a response arrived; the message names the request. */
static int finish(struct run_state *st, CURLcode done, char *errbuf,
                  size_t errlen)
{
	const struct tb_http_req *req = st->req;
	struct tb_http_resp *resp = st->resp;
	curl_off_t cl = -1;
	int rc = TASKBOX_OK;

	if (resp->status == 0)
		curl_easy_getinfo(st->easy, CURLINFO_RESPONSE_CODE,
		                  &resp->status);
	if (curl_easy_getinfo(st->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
	                      &cl) == CURLE_OK)
		resp->content_length = cl;
	if (done == CURLE_WRITE_ERROR && (st->stopped || st->sink_rc)) {
		rc = st->sink_rc;
		if (rc != TASKBOX_OK)
			tb_e2b_fail(errbuf, errlen, NULL, NULL, rc,
			            "%s %s: the response could not be taken in",
			            req->method, req->url);
	} else if (done != CURLE_OK) {
		int code = TASKBOX_E_UNAVAILABLE;
		if (done == CURLE_OPERATION_TIMEDOUT)
			code = TASKBOX_E_TIMEOUT;
		else if (done == CURLE_OUT_OF_MEMORY)
			code = TASKBOX_E_NOMEM;
		else if (resp->status != 0)
			code = TASKBOX_E_PROTOCOL;
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, code, "%s %s: %s",
		                 req->method, req->url,
		                 curl_easy_strerror(done));
	}
	return rc;
}

/* One attempt, on a multi handle borrowed from the instance's pool (its
 * idle connections are reused). Returns an ABI code; OK when a response
 * arrived. */
static int attempt(struct tb_e2b *inst, const struct tb_http_req *req,
                   struct tb_http_resp *resp, char *errbuf, size_t errlen)
{
	struct run_state st = {req, resp, NULL, TASKBOX_OK, 0, 0};
	CURLM *multi = NULL;
	CURL *easy = req->easy;
	int own_easy = easy == NULL;
	uint64_t deadline = req->timeout_ms ? now_ms() + req->timeout_ms : 0;
	int running = 1, rc = TASKBOX_OK;
	CURLcode done = CURLE_OK;
	CURLMsg *msg;
	int left;

	resp_reset(resp);
	if (own_easy)
		easy = curl_easy_init();
	multi = tb_http_pool_take(inst->pool);
	if (!easy || !multi) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                 "out of memory making an HTTP request");
		goto out;
	}
	st.easy = easy;
	if (setup(inst, req, &st, easy) != 0 ||
	    curl_multi_add_handle(multi, easy) != CURLM_OK) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_INTERNAL,
		                 "cannot set up the HTTP request");
		goto out;
	}
	while (running) {
		if (curl_multi_perform(multi, &running) != CURLM_OK) {
			rc = tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                 TASKBOX_E_INTERNAL,
			                 "the HTTP engine failed");
			goto out_remove;
		}
		if (!running)
			break;
		if (req->tick && (rc = req->tick(req->ctx)) != TASKBOX_OK)
			goto out_remove;
		if (deadline && now_ms() >= deadline) {
			rc = tb_e2b_fail(
			    errbuf, errlen, NULL, NULL, TASKBOX_E_TIMEOUT,
			    "%s %s: no answer within %u ms", req->method,
			    req->url, (unsigned)req->timeout_ms);
			goto out_remove;
		}
		curl_multi_poll(multi, NULL, 0, 100, NULL);
	}
	while ((msg = curl_multi_info_read(multi, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE)
			done = msg->data.result;
	rc = finish(&st, done, errbuf, errlen);
out_remove:
	curl_multi_remove_handle(multi, easy);
out:
	tb_http_pool_give(inst->pool, multi);
	if (own_easy && easy)
		curl_easy_cleanup(easy);
	return rc;
}

/* Seconds the service asked us to wait, or -1 when it did not say. */
static long retry_after_s(const char *v)
{
	char *end;
	long s;
	time_t when;

	if (!v[0])
		return -1;
	errno = 0;
	s = strtol(v, &end, 10);
	if (end != v && *end == '\0' && errno == 0)
		return s < 0 ? -1 : s;
	when = curl_getdate(v, NULL);
	if (when == -1)
		return -1;
	s = (long)(when - time(NULL));
	return s < 0 ? 0 : s;
}

/* Sleeps ms, running the tick every 100 ms. */
static int wait_ms(const struct tb_http_req *req, long ms)
{
	while (ms > 0) {
		long step = ms < 100 ? ms : 100;
		struct timespec ts = {0, step * 1000000L};
		int rc;

		if (req->tick && (rc = req->tick(req->ctx)) != TASKBOX_OK)
			return rc;
		nanosleep(&ts, NULL);
		ms -= step;
	}
	return TASKBOX_OK;
}

int tb_http_run(struct tb_e2b *inst, const struct tb_http_req *req,
                struct tb_http_resp *resp, char *errbuf, size_t errlen)
{
	int tries, rc;
	char line[128];

	for (tries = 0;; tries++) {
		long wait;

		rc = attempt(inst, req, resp, errbuf, errlen);
		if (rc != TASKBOX_OK || resp->status != 429 ||
		    !req->retry_429 || tries >= TB_HTTP_MAX_RETRIES)
			return rc;
		wait = retry_after_s(resp->retry_after);
		if (wait < 0 || wait > TB_HTTP_MAX_RETRY_AFTER_S)
			return rc;
		snprintf(line, sizeof line,
		         "rate limited; retrying in %ld s as the service asked",
		         wait);
		inst->host->log(TASKBOX_LOG_INFO, TB_E2B_NAME, line);
		rc = wait_ms(req, wait * 1000L);
		if (rc != TASKBOX_OK)
			return tb_e2b_fail(errbuf, errlen, NULL, NULL, rc,
			                   "cancelled while waiting out a rate "
			                   "limit");
	}
}

int tb_http_fail(struct tb_e2b *inst, const char *secret2,
                 const struct tb_http_resp *resp, int envd_plane,
                 const char *what, char *errbuf, size_t errlen)
{
	char msg[400];
	int code = tb_e2b_http_code(resp->status, envd_plane);

	tb_e2b_service_message(resp->body, resp->len, msg, sizeof msg);
	if (resp->status == 429 && resp->retry_after[0])
		return tb_e2b_fail(errbuf, errlen, inst->api_key, secret2, code,
		                   "%s: HTTP 429: %s (retry after %s)", what,
		                   msg[0] ? msg : "rate limited",
		                   resp->retry_after);
	return tb_e2b_fail(errbuf, errlen, inst->api_key, secret2, code,
	                   "%s: HTTP %ld: %s", what, resp->status,
	                   msg[0] ? msg : "no message");
}

int tb_http_run_batch(struct tb_e2b *inst,
                      const struct tb_http_req *const *reqs,
                      struct tb_http_resp *const *resps, int *rcs, size_t n,
                      size_t *failed_at, char *errbuf, size_t errlen)
{
	struct run_state *st = calloc(n ? n : 1, sizeof *st);
	CURLM *multi = tb_http_pool_take(inst->pool);
	uint32_t timeout_ms = 0;
	uint64_t deadline;
	int running = 1, failed = 0, rc = TASKBOX_OK;
	char msg[TASKBOX_ERRBUF_SIZE];
	CURLMsg *m;
	size_t i;
	int left;

	if (!st || !multi) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                 "out of memory making HTTP requests");
		goto out;
	}
	for (i = 0; i < n; i++) {
		rcs[i] = TASKBOX_E_INTERNAL;
		resp_reset(resps[i]);
		st[i].req = reqs[i];
		st[i].resp = resps[i];
		st[i].easy = curl_easy_init();
		if (!st[i].easy) {
			rc = tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                 TASKBOX_E_NOMEM,
			                 "out of memory making HTTP requests");
			goto out;
		}
		if (setup(inst, reqs[i], &st[i], st[i].easy) != 0 ||
		    curl_easy_setopt(st[i].easy, CURLOPT_PRIVATE, &st[i]) !=
		        CURLE_OK ||
		    curl_multi_add_handle(multi, st[i].easy) != CURLM_OK) {
			curl_easy_cleanup(st[i].easy);
			st[i].easy = NULL;
			rc = tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                 TASKBOX_E_INTERNAL,
			                 "cannot set up the HTTP requests");
			goto out;
		}
		/* Over TLS, wait for the first connection to tell whether the
		 * rest can share it (HTTP/2) before opening more. */
		if (strncmp(reqs[i]->url, "https:", 6) == 0)
			curl_easy_setopt(st[i].easy, CURLOPT_PIPEWAIT, 1L);
		if (reqs[i]->timeout_ms > timeout_ms)
			timeout_ms = reqs[i]->timeout_ms;
	}
	deadline = timeout_ms ? now_ms() + timeout_ms : 0;
	while (running) {
		if (curl_multi_perform(multi, &running) != CURLM_OK) {
			rc = tb_e2b_fail(errbuf, errlen, NULL, NULL,
			                 TASKBOX_E_INTERNAL,
			                 "the HTTP engine failed");
			goto out;
		}
		while ((m = curl_multi_info_read(multi, &left)) != NULL) {
			struct run_state *done = NULL;
			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
			                  (char **)&done);
			i = (size_t)(done - st);
			done->finished = 1;
			rcs[i] = finish(done, m->data.result, msg, sizeof msg);
			if (rcs[i] != TASKBOX_OK && !failed++) {
				snprintf(errbuf, errlen, "%s", msg);
				*failed_at = i;
			}
		}
		if (!running)
			break;
		if (deadline && now_ms() >= deadline) {
			for (i = 0; i < n; i++) {
				if (st[i].finished)
					continue;
				rcs[i] = TASKBOX_E_TIMEOUT;
				if (failed++)
					continue;
				*failed_at = i;
				tb_e2b_fail(errbuf, errlen, NULL, NULL,
				            TASKBOX_E_TIMEOUT,
				            "%s %s: no answer within %u ms",
				            reqs[i]->method, reqs[i]->url,
				            (unsigned)timeout_ms);
			}
			break;
		}
		curl_multi_poll(multi, NULL, 0, 100, NULL);
	}
out:
	for (i = 0; st && i < n; i++) {
		if (!st[i].easy)
			continue;
		curl_multi_remove_handle(multi, st[i].easy);
		curl_easy_cleanup(st[i].easy);
	}
	tb_http_pool_give(inst->pool, multi);
	free(st);
	return rc;
}
