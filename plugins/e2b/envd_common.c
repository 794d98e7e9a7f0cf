/* What every envd request shares: the URL and the routing and auth
 * headers, as the sandbox proxy and envd expect them. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b_int.h"

/* base64("user:"): the user an envd older than 0.4.0 must be told. */
#define TB_E2B_LEGACY_AUTH "Basic dXNlcjo="

int tb_envd_headers(const struct tb_e2b_conn *conn, struct curl_slist **list)
{
	char port[16];
	struct curl_slist *next;

	snprintf(port, sizeof port, "%d", TB_E2B_ENVD_PORT);
	if (conn->access_token &&
	    tb_http_header(list, "X-Access-Token", conn->access_token) != 0)
		return -1;
	if (tb_http_header(list, "E2b-Sandbox-Id", conn->id) != 0 ||
	    tb_http_header(list, "E2b-Sandbox-Port", port) != 0)
		return -1;
	if (conn->legacy_user &&
	    tb_http_header(list, "Authorization", TB_E2B_LEGACY_AUTH) != 0)
		return -1;
	next = curl_slist_append(*list, "Expect:");
	if (!next)
		return -1;
	*list = next;
	return 0;
}

char *tb_envd_url(const struct tb_e2b_conn *conn, const char *path)
{
	size_t n = strlen(conn->envd_url) + strlen(path) + 1;
	char *url = malloc(n);

	if (url)
		snprintf(url, n, "%s%s", conn->envd_url, path);
	return url;
}
