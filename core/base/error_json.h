/* The body of a tool error result, {"error": message}. */
#ifndef TB_ERROR_JSON_H
#define TB_ERROR_JSON_H

#include <jansson.h>
#include <stddef.h>

/* Rewrites a message's bytes before any error body carries them (the
 * operator's masking, set by the layer that owns it): into a new malloc'd
 * *out of *outlen bytes; returns -1 when out of memory. */
typedef int (*tb_error_filter_fn)(const unsigned char *in, size_t len,
                                  unsigned char **out, size_t *outlen);

/* Sets the filter every error body goes through (NULL: none). Call before
 * serving starts and after it ended; not thread-safe. */
void tb_error_json_set_filter(tb_error_filter_fn fn);

/* {"error": message}, through the filter, made valid UTF-8 (it may quote bytes
 * a plugin or a sandbox produced); NULL when out of memory. */
json_t *tb_error_json(const char *message);

/* The same with printf formatting. */
json_t *tb_error_jsonf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* A handler's last step: 0 when *result was built, else 1 with *result set
 * to the tool error "out of memory building the result". */
int tb_result_or_oom(json_t **result);

#endif /* TB_ERROR_JSON_H */
