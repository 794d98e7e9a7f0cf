/* Argument checks for the tasks layer's tools. The MCP core validates
 * arguments against each tool's schema first; these checks repeat the rules
 * that guard provider calls, so that no provider is ever reached with a bad
 * value, and every message names the field and the rule. */
#ifndef TB_TOOL_ARGS_H
#define TB_TOOL_ARGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error_json.h"

/* Refuses a field whose name is not in known (NULL-terminated). */
int tb_args_known(json_t *args, const char *const *known, char *err,
                  size_t errlen);

/* An integer field in lo..hi, def when absent. */
int tb_arg_int(json_t *args, const char *name, int64_t lo, int64_t hi,
               int64_t def, int64_t *out, char *err, size_t errlen);

/* A string field of min..max characters (code points); *out is NULL when
 * absent and not required. Borrowed from args. */
int tb_arg_str(json_t *args, const char *name, bool required, size_t min,
               size_t max, const char **out, char *err, size_t errlen);

/* A string field that must be one of the NULL-terminated choices; *out is
 * def when absent. */
int tb_arg_enum(json_t *args, const char *name, const char *const *choices,
                const char *def, const char **out, char *err, size_t errlen);

/* A boolean field, def when absent. */
int tb_arg_bool(json_t *args, const char *name, bool def, bool *out, char *err,
                size_t errlen);

/* Length of s as JSON text with every non-ASCII character escaped. */
size_t tb_json_ascii_len(const char *s);

#endif /* TB_TOOL_ARGS_H */
