/* tb_jose_load (jose_lib.h): libjose by the soname found at build time. */
#include "config.h"

#include "base/lazy_lib.h"
#include "transport/jose_lib.h"

struct tb_jose tb_jose;

static const struct tb_lazy_sym syms[] = {
    {"jose_b64_dec_buf", &tb_jose.b64_dec_buf},
    {"jose_jws_ver", &tb_jose.jws_ver},
};

static struct tb_lazy_lib lib = TB_LAZY_LIB_INIT(TB_JOSE_SONAME, syms);

int tb_jose_load(char *err, size_t errlen)
{
	return tb_lazy_lib_load(&lib, err, errlen);
}
