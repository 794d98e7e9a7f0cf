/* http_mhd_load (http_mhd.h): the library by the soname found at build
 * time, each function the transport calls bound once (base/lazy_lib.h). */
#include "config.h"

#include "base/lazy_lib.h"
#include "transport/http_mhd.h"

struct http_mhd mhd;

#define SYM(name)                                                              \
	{                                                                      \
		"MHD_" #name, &mhd.name                                        \
	}

static const struct tb_lazy_sym syms[] = {
    SYM(start_daemon),
    SYM(stop_daemon),
    SYM(quiesce_daemon),
    SYM(get_daemon_info),
    SYM(get_connection_info),
    SYM(suspend_connection),
    SYM(resume_connection),
    SYM(queue_response),
    SYM(create_response_from_buffer),
    SYM(create_response_from_callback),
    SYM(create_response_from_buffer_with_free_callback_cls),
    SYM(add_response_header),
    SYM(destroy_response),
    SYM(lookup_connection_value),
    SYM(get_connection_values_n),
    SYM(is_feature_supported),
};

static struct tb_lazy_lib lib = TB_LAZY_LIB_INIT(TB_MHD_SONAME, syms);

int http_mhd_load(char *why, size_t whylen)
{
	return tb_lazy_lib_load(&lib, why, whylen);
}
