/* The URL rules of http_url.h. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "base/curl_lib.h"
#include "base/http_url.h"
#include "base/log.h"

/* Parses url into a new handle; the scheme (lower case) and host in
 * *scheme and *host (tb_curl.free them); false, both NULL, when it is
 * not absolute http(s) with a host, or has user info or a fragment, or
 * libcurl cannot be loaded (logged). */
static bool parse(const char *url, char **scheme, char **host)
{
	char why[300];
	CURLU *u;
	char *user = NULL, *fragment = NULL;
	bool ok = false;

	*scheme = *host = NULL;
	if (tb_curl_load(why, sizeof why) < 0) {
		tb_log(TB_LOG_ERROR, "cannot check a URL: %s", why);
		return false;
	}
	u = tb_curl.url();
	if (!u || !url || strlen(url) > 2048 || strpbrk(url, " \t\r\n"))
		goto out;
	if (tb_curl.url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    tb_curl.url_get(u, CURLUPART_SCHEME, scheme, 0) != CURLUE_OK ||
	    tb_curl.url_get(u, CURLUPART_HOST, host, 0) != CURLUE_OK)
		goto out;
	if (tb_curl.url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
	    tb_curl.url_get(u, CURLUPART_FRAGMENT, &fragment, 0) == CURLUE_OK)
		goto out;
	ok = (strcmp(*scheme, "http") == 0 || strcmp(*scheme, "https") == 0) &&
	     **host && strncasecmp(url, *scheme, strlen(*scheme)) == 0;
out:
	tb_curl.free(user);
	tb_curl.free(fragment);
	tb_curl.url_cleanup(u);
	if (!ok) {
		tb_curl.free(*scheme);
		tb_curl.free(*host);
		*scheme = *host = NULL;
	}
	return ok;
}

bool tb_url_absolute_http(const char *url)
{
	char *scheme, *host;

	if (!parse(url, &scheme, &host))
		return false;
	tb_curl.free(scheme);
	tb_curl.free(host);
	return true;
}

bool tb_url_https_or_loopback(const char *url)
{
	char *scheme, *host;
	bool ok;

	if (!parse(url, &scheme, &host))
		return false;
	ok = strcmp(scheme, "http") != 0 || strncmp(host, "127.", 4) == 0 ||
	     strcmp(host, "[::1]") == 0 || strcasecmp(host, "localhost") == 0;
	tb_curl.free(scheme);
	tb_curl.free(host);
	return ok;
}
