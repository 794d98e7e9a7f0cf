/* One GET of a JSON document from the issuer (its metadata or its JWKS)
 * with libcurl: HTTPS only, or plain HTTP to a loopback address; no
 * redirects; bounded in time and size; Cache-Control's max-age read. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/curl_lib.h"
#include "base/http_url.h"
#include "transport/oauth_internal.h"

struct body {
	char *buf;
	size_t len;
	bool too_large;
	int64_t max_age_s;
	const int *stop;
};

static size_t on_data(char *data, size_t size, size_t n, void *cls)
{
	struct body *b = cls;
	size_t add = size * n;
	char *grown;

	if (b->len + add > OAUTH_FETCH_MAX) {
		b->too_large = true;
		return 0;
	}
	grown = realloc(b->buf, b->len + add + 1);
	if (!grown)
		return 0;
	memcpy(grown + b->len, data, add);
	b->buf = grown;
	b->len += add;
	return add;
}

/* Reads max-age (no-store and no-cache count as 0) from Cache-Control. */
static size_t on_header(char *data, size_t size, size_t n, void *cls)
{
	struct body *b = cls;
	size_t len = size * n;
	static const char name[] = "cache-control:";
	char line[512];

	if (len <= sizeof name - 1 || len >= sizeof line ||
	    strncasecmp(data, name, sizeof name - 1) != 0)
		return len;
	memcpy(line, data, len);
	line[len] = '\0';
	for (char *p = line + sizeof name - 1; *p; p++) {
		p += strspn(p, " ,\t");
		if (strncasecmp(p, "no-store", 8) == 0 ||
		    strncasecmp(p, "no-cache", 8) == 0)
			b->max_age_s = 0;
		else if (strncasecmp(p, "max-age=", 8) == 0 &&
		         b->max_age_s != 0)
			b->max_age_s = strtoll(p + 8, NULL, 10);
		p += strcspn(p, ",");
		if (!*p)
			break;
	}
	return len;
}

static int on_progress(void *cls, curl_off_t a, curl_off_t b, curl_off_t c,
                       curl_off_t d)
{
	struct body *body = cls;

	return body->stop && __atomic_load_n(body->stop, __ATOMIC_ACQUIRE);
}

int oauth_fetch_json(const char *url, const int *stop, struct oauth_doc *d,
                     char *why, size_t whylen)
{
	struct body b = {.max_age_s = -1, .stop = stop};
	char err[CURL_ERROR_SIZE] = "";
	CURL *c;
	CURLcode rc;
	long status = 0;
	int ret = -1;

	d->json = NULL;
	d->max_age_s = -1;
	if (!tb_url_https_or_loopback(url)) {
		snprintf(
		    why, whylen,
		    "%.256s: must be https (or http to a loopback address)",
		    url);
		return -1;
	}
	c = tb_curl.easy_init();
	if (!c) {
		snprintf(why, whylen, "%.256s: out of memory", url);
		return -1;
	}
	tb_curl.easy_setopt(c, CURLOPT_URL, url);
	tb_curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	tb_curl.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	tb_curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	tb_curl.easy_setopt(c, CURLOPT_TIMEOUT, (long)OAUTH_FETCH_TIMEOUT_S);
	tb_curl.easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	tb_curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	tb_curl.easy_setopt(c, CURLOPT_WRITEDATA, &b);
	tb_curl.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	tb_curl.easy_setopt(c, CURLOPT_HEADERDATA, &b);
	tb_curl.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	tb_curl.easy_setopt(c, CURLOPT_XFERINFODATA, &b);
	tb_curl.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	tb_curl.easy_setopt(c, CURLOPT_USERAGENT, "taskbox/" PACKAGE_VERSION);
	rc = tb_curl.easy_perform(c);
	tb_curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%.256s: %s", url,
		         b.too_large ? "larger than 1 MiB"
		         : *err      ? err
		                     : tb_curl.easy_strerror(rc));
		goto out;
	}
	if (status != 200) {
		snprintf(why, whylen, "%.256s: HTTP status %ld", url, status);
		goto out;
	}
	d->json = b.buf ? json_loadb(b.buf, b.len, 0, NULL) : NULL;
	if (!json_is_object(d->json)) {
		json_decref(d->json);
		d->json = NULL;
		snprintf(why, whylen, "%.256s: not a JSON object", url);
		goto out;
	}
	d->max_age_s = b.max_age_s;
	ret = 0;
out:
	free(b.buf);
	tb_curl.easy_cleanup(c);
	return ret;
}
