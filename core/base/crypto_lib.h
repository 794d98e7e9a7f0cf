/* OpenSSL's libcrypto, loaded when it is first needed (tb_crypto_load):
 * an idempotency key's request digest, an Ed25519 signature's check. A
 * server that needs neither never maps it (its relocations alone took
 * half again what a stdio server's start takes without it). Callers use
 * `tb_crypto.NAME(...)` for each EVP_NAME they use. */
#ifndef TB_CRYPTO_LIB_H
#define TB_CRYPTO_LIB_H

#include <stddef.h>

#include <openssl/evp.h>

#define TB_CRYPTO_FN(name) __typeof__(EVP_##name) *name

struct tb_crypto {
	TB_CRYPTO_FN(MD_CTX_new);
	TB_CRYPTO_FN(MD_CTX_free);
	TB_CRYPTO_FN(sha256);
	TB_CRYPTO_FN(DigestInit_ex);
	TB_CRYPTO_FN(DigestUpdate);
	TB_CRYPTO_FN(DigestFinal_ex);
	TB_CRYPTO_FN(PKEY_new_raw_public_key);
	TB_CRYPTO_FN(PKEY_free);
	TB_CRYPTO_FN(DigestVerifyInit);
	TB_CRYPTO_FN(DigestVerify);
};

extern struct tb_crypto tb_crypto;

/* Loads the library once and fills tb_crypto (any thread; later calls
 * return the first one's result). 0, or -1 with why in err. */
int tb_crypto_load(char *err, size_t errlen);

#endif /* TB_CRYPTO_LIB_H */
