/* Parsed status records kept for the next read of the same bytes. A
 * get_task reads its task's status.json on every call, and most calls find
 * it unchanged; jansson's parse of those ~400 bytes cost more than the rest
 * of the call's own work. Thread-safe. */
#ifndef TB_RECORD_CACHE_H
#define TB_RECORD_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tasks/sup_record.h"
#include "taskbox/provider.h"

/* Like tb_task_record_parse with expect_id set, but answers from the cache
 * when the last text parsed for task expect_id was byte for byte the same.
 * The record shares its json with the cache (never modify it); clear it
 * with tb_task_record_clear as usual. */
int tb_record_cache_parse(const char *text, size_t len, const char *expect_id,
                          struct tb_task_record *rec, char *err, size_t errlen);

/* A finished task's logs never change again. Once a read has found a task
 * finished, each log it read whole (from byte 0 to its recorded size, at
 * most TB_RECORD_LOG_MAX bytes) is kept beside the cached record, and the
 * next get_task of the task pages from here instead of the provider. The
 * record itself is still read every time: it is what says the task (and
 * its sandbox) is still there. */
#define TB_RECORD_LOG_MAX 4096

enum tb_log_stream { TB_LOG_STDOUT, TB_LOG_STDERR };

/* Keeps data[0..len), the whole of stream's log, with rec: a finished
 * record as tb_record_cache_parse gave it. Does nothing when rec is not
 * finished, the cache no longer holds rec, len differs from the size rec
 * records or is over TB_RECORD_LOG_MAX. */
void tb_record_cache_keep_log(const struct tb_task_record *rec,
                              enum tb_log_stream stream,
                              const unsigned char *data, size_t len);

/* When stream's log is kept with rec, sets *page to a copy of at most
 * limit of its bytes from offset (free it with tb_buf_free) and returns 1;
 * else (or out of memory) returns 0 and leaves *page empty. */
int tb_record_cache_log_page(const struct tb_task_record *rec,
                             enum tb_log_stream stream, uint64_t offset,
                             size_t limit, struct taskbox_buf *page);

/* True when the last record parsed for task_id says the task ended and a
 * page of each log from these offsets would come from the cache (the log
 * kept whole, or the offset at or past its recorded end): a view then
 * needs no log read, only the record. */
bool tb_record_cache_pages_kept(const char *task_id, uint64_t stdout_offset,
                                uint64_t stderr_offset);

/* Empties the cache (tests; and at exit, so leak checkers see it freed). */
void tb_record_cache_clear(void);

#endif /* TB_RECORD_CACHE_H */
