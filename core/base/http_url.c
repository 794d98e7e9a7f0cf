/* The URL rules of http_url.h. */
#include "config.h"

#include <curl/curl.h>
#include <string.h>
#include <strings.h>

#include "base/http_url.h"

/* Parses url into a new handle; the scheme (lower case) and host in
 * *scheme and *host (curl_free them); false when it is not absolute
 * http(s) with a host, or has user info or a fragment. */
static bool parse(const char *url, char **scheme, char **host)
{
	CURLU *u = curl_url();
	char *user = NULL, *fragment = NULL;
	bool ok = false;

	*scheme = *host = NULL;
	if (!u || !url || strlen(url) > 2048 || strpbrk(url, " \t\r\n"))
		goto out;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, host, 0) != CURLUE_OK)
		goto out;
	if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_FRAGMENT, &fragment, 0) == CURLUE_OK)
		goto out;
	ok = (strcmp(*scheme, "http") == 0 || strcmp(*scheme, "https") == 0) &&
	     **host && strncasecmp(url, *scheme, strlen(*scheme)) == 0;
out:
	curl_free(user);
	curl_free(fragment);
	curl_url_cleanup(u);
	if (!ok) {
		curl_free(*scheme);
		curl_free(*host);
		*scheme = *host = NULL;
	}
	return ok;
}

bool tb_url_absolute_http(const char *url)
{
	char *scheme, *host;
	bool ok = parse(url, &scheme, &host);

	curl_free(scheme);
	curl_free(host);
	return ok;
}

bool tb_url_https_or_loopback(const char *url)
{
	char *scheme, *host;
	bool ok = parse(url, &scheme, &host);

	if (ok && strcmp(scheme, "http") == 0)
		ok = strncmp(host, "127.", 4) == 0 ||
		     strcmp(host, "[::1]") == 0 ||
		     strcasecmp(host, "localhost") == 0;
	curl_free(scheme);
	curl_free(host);
	return ok;
}
