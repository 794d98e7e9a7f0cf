/* Log pages are byte ranges; a page edge may split a UTF-8 sequence. This
 * turns any bytes into valid UTF-8, each invalid or cut-off sequence (its
 * maximal subpart, as Unicode recommends) becoming one U+FFFD. */
#ifndef TB_UTF8_PAGE_H
#define TB_UTF8_PAGE_H

#include <jansson.h>
#include <stddef.h>

/* Writes the repaired text of in[0..len) into a new malloc'd buffer (*out,
 * *outlen bytes, NUL-terminated for convenience). Returns 0, or -1 when out
 * of memory. Deterministic: the same bytes give the same text. */
int tb_utf8_repair(const unsigned char *in, size_t len, char **out,
                   size_t *outlen);

/* A new JSON string holding the repaired text, or NULL when out of memory. */
json_t *tb_utf8_page_json(const unsigned char *in, size_t len);

#endif /* TB_UTF8_PAGE_H */
