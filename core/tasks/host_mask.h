/* Host-side masking: the operator's configured secret values are replaced
 * by "****" in every page the host returns. This is exact matching within
 * one page; a value split across two pages is not seen (the in-sandbox
 * supervisor masks its own environment's secrets across reads). */
#ifndef TB_HOST_MASK_H
#define TB_HOST_MASK_H

#include <stddef.h>

#define TB_MASK_TEXT "****"

struct tb_mask;

/* Copies values (n of them; empty ones and values shorter than 4 bytes are
 * skipped, they would destroy output). Returns NULL when out of memory. */
struct tb_mask *tb_mask_new(const char *const *values, size_t n);

void tb_mask_free(struct tb_mask *m);

/* Replaces every occurrence of every value in data[0..len) (longest value
 * first where two could match at one position) and returns a new malloc'd
 * buffer in *out / *outlen (never NULL on success, even for len 0). m may be
 * NULL (nothing to mask). Returns -1 when out of memory. Thread-safe. */
int tb_mask_apply(const struct tb_mask *m, const unsigned char *data,
                  size_t len, unsigned char **out, size_t *outlen);

/* The operator's values, masked on every page the host returns: set once
 * before serving and cleared after (NULL: nothing). The mask is borrowed. */
void tb_mask_set_operator(const struct tb_mask *m);
const struct tb_mask *tb_mask_operator(void);

#endif /* TB_HOST_MASK_H */
