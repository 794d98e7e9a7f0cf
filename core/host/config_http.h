/* The "http" section of the config file, and the validation helpers of
 * config_file.c it shares. Private to the host layer's config files. */
#ifndef TB_CONFIG_HTTP_H
#define TB_CONFIG_HTTP_H

#include <jansson.h>
#include <stdbool.h>

#include "host/config_file.h"

/* Problems found so far, one "JSON.PATH: rule" per line. */
struct tb_config_problems {
	char *buf;
	size_t len;
	size_t used;
	unsigned count;
};

void tb_config_problem(struct tb_config_problems *p, const char *path,
                       const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "an object", "a string", ... for messages. */
const char *tb_config_type_name(const json_t *v);

/* Reports every key of obj not in allowed (NULL-terminated). */
void tb_config_unknown_keys(struct tb_config_problems *p, const char *path,
                            json_t *obj, const char *const *allowed,
                            const char *listed);

/* Whether s (may be NULL) is an environment variable name. */
bool tb_config_env_name_ok(const char *s);

/* Validates the "http" section (NULL: absent). */
void tb_config_check_http(struct tb_config_problems *p, json_t *http);

/* Copies a validated "http" section; NULL when absent, or with *failed set
 * when out of memory. */
struct tb_config_http *tb_config_take_http(json_t *http, bool *failed);

void tb_config_free_http(struct tb_config_http *h);

#endif /* TB_CONFIG_HTTP_H */
