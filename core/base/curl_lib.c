/* tb_curl_load (curl_lib.h): libcurl by the soname found at build time. */
#include "config.h"

#include "base/curl_lib.h"
#include "base/lazy_lib.h"

struct tb_curl tb_curl;

#define SYM(name)                                                              \
	{                                                                      \
		"curl_" #name, &tb_curl.name                                   \
	}

static const struct tb_lazy_sym syms[] = {
    SYM(global_init),  SYM(free),         SYM(url),           SYM(url_set),
    SYM(url_get),      SYM(url_cleanup),  SYM(easy_init),     SYM(easy_setopt),
    SYM(easy_perform), SYM(easy_getinfo), SYM(easy_strerror), SYM(easy_cleanup),
};

static struct tb_lazy_lib lib = TB_LAZY_LIB_INIT(TB_CURL_SONAME, syms);

int tb_curl_load(char *err, size_t errlen)
{
	return tb_lazy_lib_load(&lib, err, errlen);
}
