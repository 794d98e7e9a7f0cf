/* Settings parsing shared by the plugins. Compiled into each plugin (a
 * plugin links no core code), so every name here is hidden. */
#ifndef TB_PLUGIN_SETTINGS_H
#define TB_PLUGIN_SETTINGS_H

#include <stddef.h>

#include <jansson.h>

/* Checks the 'env' setting, an object of NAME: value, and hands each entry
 * to add(ctx, "NAME=value") (a malloc'ed string add takes over, even when
 * it fails). A name must match [A-Za-z_][A-Za-z0-9_]* and differ from
 * reserved (NULL: none); a value must be a string without NUL bytes.
 * Returns TASKBOX_OK; TASKBOX_E_INVALID with errbuf naming the setting and
 * the rule; TASKBOX_E_NOMEM; or the first nonzero status add returned. */
__attribute__((visibility("hidden"))) int
tb_settings_env(json_t *env, const char *reserved,
                int (*add)(void *ctx, char *entry), void *ctx, char *errbuf,
                size_t errlen);

#endif /* TB_PLUGIN_SETTINGS_H */
