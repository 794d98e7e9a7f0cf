/* libcurl, loaded when it is first needed (tb_curl_load): the OAuth
 * verifier's fetches and the URL rules of HTTP settings. A stdio server
 * never maps it, nor the TLS, Kerberos, LDAP and other libraries that come
 * with it, whose loading took four times what spawning and initializing
 * the stdio server takes without them. Callers use `tb_curl.NAME(...)` for
 * each curl_NAME they use. */
#ifndef TB_CURL_LIB_H
#define TB_CURL_LIB_H

#include <stddef.h>

#include <curl/curl.h>

#define TB_CURL_FN(name) __typeof__(curl_##name) *name

struct tb_curl {
	TB_CURL_FN(global_init);
	TB_CURL_FN(free);
	TB_CURL_FN(url);
	TB_CURL_FN(url_set);
	TB_CURL_FN(url_get);
	TB_CURL_FN(url_cleanup);
	TB_CURL_FN(easy_init);
	TB_CURL_FN(easy_setopt);
	TB_CURL_FN(easy_perform);
	TB_CURL_FN(easy_getinfo);
	TB_CURL_FN(easy_strerror);
	TB_CURL_FN(easy_cleanup);
};

extern struct tb_curl tb_curl;

/* Loads the library once and fills tb_curl (any thread; later calls
 * return the first one's result). 0, or -1 with why in err. */
int tb_curl_load(char *err, size_t errlen);

#endif /* TB_CURL_LIB_H */
