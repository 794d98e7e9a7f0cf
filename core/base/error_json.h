/* The body of a tool error result, {"error": message}. */
#ifndef TB_ERROR_JSON_H
#define TB_ERROR_JSON_H

#include <jansson.h>

/* {"error": message}, the message made valid UTF-8 (it may quote bytes a
 * plugin or a sandbox produced); NULL when out of memory. */
json_t *tb_error_json(const char *message);

/* The same with printf formatting. */
json_t *tb_error_jsonf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* A handler's last step: 0 when *result was built, else 1 with *result set
 * to the tool error "out of memory building the result". */
int tb_result_or_oom(json_t **result);

#endif /* TB_ERROR_JSON_H */
