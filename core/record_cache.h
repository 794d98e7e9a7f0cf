/* Parsed status records kept for the next read of the same bytes. A
 * get_task reads its task's status.json on every call, and most calls find
 * it unchanged; jansson's parse of those ~400 bytes cost more than the rest
 * of the call's own work. Thread-safe. */
#ifndef TB_RECORD_CACHE_H
#define TB_RECORD_CACHE_H

#include <stddef.h>

#include "sup_record.h"

/* Like tb_task_record_parse with expect_id set, but answers from the cache
 * when the last text parsed for task expect_id was byte for byte the same.
 * The record shares its json with the cache (never modify it); clear it
 * with tb_task_record_clear as usual. */
int tb_record_cache_parse(const char *text, size_t len, const char *expect_id,
                          struct tb_task_record *rec, char *err, size_t errlen);

/* Empties the cache (tests; and at exit, so leak checkers see it freed). */
void tb_record_cache_clear(void);

#endif /* TB_RECORD_CACHE_H */
