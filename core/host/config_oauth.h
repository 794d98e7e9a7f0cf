/* The config file's "http.public_url" and "http.oauth": their validation
 * and their copy. Private to the host layer's config files. */
#ifndef TB_CONFIG_OAUTH_H
#define TB_CONFIG_OAUTH_H

#include <jansson.h>
#include <stdbool.h>

#include "host/config_http.h"

/* Validates public_url and oauth of the "http" object (an object). */
void tb_config_check_oauth(struct tb_config_problems *p, json_t *http);

/* Copies a validated "oauth" object; NULL when absent, or with *failed
 * set when out of memory. */
struct tb_config_oauth *tb_config_take_oauth(json_t *oauth, bool *failed);

void tb_config_free_oauth(struct tb_config_oauth *o);

#endif /* TB_CONFIG_OAUTH_H */
