/* Rules for the URLs of HTTP settings: the server's public URL and an
 * OAuth issuer's (parsed by libcurl's URL API). Any thread. */
#ifndef TB_HTTP_URL_H
#define TB_HTTP_URL_H

#include <stdbool.h>

/* Whether url is an absolute http or https URL with a host, without a
 * fragment or user info. */
bool tb_url_absolute_http(const char *url);

/* Whether url is absolute http(s) (as above) and either https or http to
 * a loopback host (127.0.0.0/8, [::1], localhost). */
bool tb_url_https_or_loopback(const char *url);

#endif /* TB_HTTP_URL_H */
