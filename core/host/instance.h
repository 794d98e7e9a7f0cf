/* Starting and stopping one provider instance: the step tb_registry_open
 * takes per configured instance, also used to probe instances one by one. */
#ifndef TB_INSTANCE_H
#define TB_INSTANCE_H

#include <stddef.h>

struct tb_config_instance;
struct tb_plugin;
struct taskbox_provider;

/* Loads plugin_name and runs its init with settings_json and tb_host().
 * On success sets *plugin (one reference) and *handle and returns 0; on
 * failure writes one line naming the instance, the file and the reason
 * (with the plugin's own message) into err and returns -1. */
int tb_instance_start(const char *name, const char *plugin_name,
                      const char *settings_json, struct tb_plugin **plugin,
                      void **handle, char *err, size_t errlen);

/* Runs the plugin's fini on handle, then drops the plugin reference. */
void tb_instance_stop(struct tb_plugin *plugin, void *handle);

/* When the config instance ci sets "watches" for plugin p, which sees its
 * tasks' processes (TASKBOX_FEATURE_HOST_PIDS) and so never watches a wait
 * in a sandbox, writes the warning that names the field into buf and
 * returns 1; else returns 0. */
int tb_instance_watches_unused(const struct tb_config_instance *ci,
                               const struct taskbox_provider *p, char *buf,
                               size_t len);

#endif /* TB_INSTANCE_H */
