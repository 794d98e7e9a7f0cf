/* Base64 (RFC 4648, standard alphabet, with padding) for file contents. */
#ifndef TB_BASE64_H
#define TB_BASE64_H

#include <stddef.h>

/* A new malloc'd NUL-terminated encoding of in[0..len), or NULL. */
char *tb_base64_encode(const unsigned char *in, size_t len, size_t *outlen);

/* Decodes text (whitespace is not allowed) into a new malloc'd buffer.
 * Returns -1 for malformed input or out of memory. */
int tb_base64_decode(const char *text, size_t len, unsigned char **out,
                     size_t *outlen);

#endif /* TB_BASE64_H */
