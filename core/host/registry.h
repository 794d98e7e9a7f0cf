/* Provider instances: the configured (name, plugin, settings) triples,
 * each with its plugin loaded and initialised. Implemented over loader.h. */
#ifndef TB_REGISTRY_H
#define TB_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include "host/config_file.h"
#include "taskbox/provider.h"

struct tb_config;

/* One initialised provider instance. Lives until tb_registry_close. */
struct tb_instance {
	const char *name; /* the config's key, e.g. "work" */
	const struct taskbox_provider *plugin; /* the loaded descriptor */
	void *handle;                          /* what plugin init returned */
	enum tb_sup_mode supervisor;           /* the config's "supervisor" */
	unsigned watches; /* the config's "watches": remote watches of
	                     this instance's waits at once */
};

/* Loads and initialises every instance named in cfg. On failure writes a
 * one-line reason naming the instance, the file and the rule into err and
 * returns -1 (nothing stays loaded). Not thread-safe. */
int tb_registry_open(const struct tb_config *cfg, char *err, size_t errlen);

/* Finishes every instance and unloads the plugins. */
void tb_registry_close(void);

/* The instance with this name, or NULL. Thread-safe after open. */
const struct tb_instance *tb_registry_find(const char *name);

/* The config's default instance. Thread-safe after open; never NULL after a
 * successful open. */
const struct tb_instance *tb_registry_default(void);

/* The number of instances, and the i-th (0 <= i < count) in the config's
 * order. Thread-safe after open. */
size_t tb_registry_count(void);
const struct tb_instance *tb_registry_at(size_t i);

/* The host services handed to every plugin (allocator, log). */
const struct taskbox_host *tb_host(void);

#endif /* TB_REGISTRY_H */
