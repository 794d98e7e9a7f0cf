/* libjose, loaded when the OAuth verifier first needs it (tb_jose_load):
 * its constructors initialise OpenSSL (reading openssl.cnf, seeding), which
 * took a stdio server's start-up from 8 ms to over 30 when it was linked.
 * Callers use `tb_jose.NAME(...)` for each jose_NAME they use. */
#ifndef TB_JOSE_LIB_H
#define TB_JOSE_LIB_H

#include <stddef.h>

#include <jose/b64.h>
#include <jose/jws.h>

#define TB_JOSE_FN(name) __typeof__(jose_##name) *name

struct tb_jose {
	TB_JOSE_FN(b64_dec_buf);
	TB_JOSE_FN(jws_ver);
};

extern struct tb_jose tb_jose;

/* Loads the library once and fills tb_jose (any thread; later calls
 * return the first one's result). 0, or -1 with why in err. */
int tb_jose_load(char *err, size_t errlen);

#endif /* TB_JOSE_LIB_H */
