/* tb_crypto_load (crypto_lib.h): libcrypto by the soname found at build
 * time. */
#include "config.h"

#include "base/crypto_lib.h"
#include "base/lazy_lib.h"

struct tb_crypto tb_crypto;

#define SYM(name)                                                              \
	{                                                                      \
		"EVP_" #name, &tb_crypto.name                                  \
	}

static const struct tb_lazy_sym syms[] = {
    SYM(MD_CTX_new),
    SYM(MD_CTX_free),
    SYM(sha256),
    SYM(DigestInit_ex),
    SYM(DigestUpdate),
    SYM(DigestFinal_ex),
    SYM(PKEY_new_raw_public_key),
    SYM(PKEY_free),
    SYM(DigestVerifyInit),
    SYM(DigestVerify),
};

static struct tb_lazy_lib lib = TB_LAZY_LIB_INIT(TB_CRYPTO_SONAME, syms);

int tb_crypto_load(char *err, size_t errlen)
{
	return tb_lazy_lib_load(&lib, err, errlen);
}
