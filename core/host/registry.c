/* Provider instances: each configured (name, plugin, settings) loaded and
 * initialised, with the host services lent to every plugin. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config_file.h"
#include "host/instance.h"
#include "host/loader.h"
#include "base/log.h"
#include "host/provider_check.h"
#include "host/registry.h"

struct slot {
	struct tb_instance inst;
	struct tb_plugin *plugin;
};

static struct slot *slots;
static size_t n_slots;
static size_t default_slot;

static void *host_alloc(size_t size)
{
	return malloc(size ? size : 1);
}

static void *host_realloc(void *ptr, size_t size)
{
	return realloc(ptr, size ? size : 1);
}

static void host_free(void *ptr)
{
	free(ptr);
}

static void host_log(enum taskbox_log_level level, const char *provider,
                     const char *message)
{
	int l = (int)level;

	if (l < TB_LOG_ERROR || l > TB_LOG_DEBUG)
		l = TB_LOG_DEBUG;
	tb_log((enum tb_log_level)l, "%s: %s", provider ? provider : "plugin",
	       message ? message : "");
}

static const struct taskbox_host host = {
    .abi_major = TASKBOX_ABI_MAJOR,
    .abi_minor = TASKBOX_ABI_MINOR,
    .struct_size = sizeof(struct taskbox_host),
    .alloc = host_alloc,
    .realloc = host_realloc,
    .free = host_free,
    .log = host_log,
};

const struct taskbox_host *tb_host(void)
{
	return &host;
}

int tb_instance_start(const char *name, const char *plugin_name,
                      const char *settings_json, struct tb_plugin **plugin,
                      void **handle, char *err, size_t errlen)
{
	char reason[1024], msg[TASKBOX_ERRBUF_SIZE];
	const struct taskbox_provider *desc;
	int rc;

	*plugin = tb_plugin_load(plugin_name, reason, sizeof reason);
	if (!*plugin) {
		snprintf(err, errlen, "instance \"%s\": %s", name, reason);
		return -1;
	}
	desc = tb_plugin_desc(*plugin);
	msg[0] = '\0';
	*handle = NULL;
	rc = desc->ops.init(&host, settings_json, handle, msg, sizeof msg);
	if (rc != TASKBOX_OK) {
		tb_errbuf_tidy(msg, sizeof msg);
		snprintf(err, errlen,
		         "instance \"%s\": %s: init failed (%s): %s", name,
		         tb_plugin_file(*plugin), tb_status_name(rc),
		         msg[0] ? msg : "no message");
		tb_plugin_release(*plugin);
		*plugin = NULL;
		return -1;
	}
	return 0;
}

void tb_instance_stop(struct tb_plugin *plugin, void *handle)
{
	tb_plugin_desc(plugin)->ops.fini(handle);
	tb_plugin_release(plugin);
}

int tb_instance_watches_unused(const struct tb_config_instance *ci,
                               const struct taskbox_provider *p, char *buf,
                               size_t len)
{
	if (!ci->watches_set || !(p->features & TASKBOX_FEATURE_HOST_PIDS))
		return 0;
	snprintf(buf, len,
	         "$.providers.%s.watches: has no effect with plugin %s: the "
	         "server sees its tasks' processes and waits on them itself",
	         ci->name, p->name);
	return 1;
}

int tb_registry_open(const struct tb_config *cfg, char *err, size_t errlen)
{
	slots = calloc(cfg->n_instances ? cfg->n_instances : 1, sizeof *slots);
	if (!slots) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (n_slots = 0; n_slots < cfg->n_instances; n_slots++) {
		const struct tb_config_instance *ci = &cfg->instances[n_slots];
		struct slot *s = &slots[n_slots];
		char warn[512];

		s->inst.name = strdup(ci->name);
		if (!s->inst.name) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		if (tb_instance_start(ci->name, ci->plugin, ci->settings_json,
		                      &s->plugin, &s->inst.handle, err,
		                      errlen) < 0) {
			free((char *)s->inst.name);
			goto fail;
		}
		s->inst.plugin = tb_plugin_desc(s->plugin);
		s->inst.supervisor = ci->supervisor;
		s->inst.watches = ci->watches;
		if (tb_instance_watches_unused(ci, s->inst.plugin, warn,
		                               sizeof warn))
			tb_log(TB_LOG_WARN, "%s", warn);
		if (strcmp(ci->name, cfg->default_name) == 0)
			default_slot = n_slots;
		tb_log(TB_LOG_INFO, "instance %s: plugin %s %s from %s",
		       ci->name, s->inst.plugin->name, s->inst.plugin->version,
		       tb_plugin_file(s->plugin));
	}
	return 0;
fail:
	tb_registry_close();
	return -1;
}

void tb_registry_close(void)
{
	while (n_slots > 0) {
		n_slots--;
		tb_instance_stop(slots[n_slots].plugin,
		                 slots[n_slots].inst.handle);
		free((char *)slots[n_slots].inst.name);
	}
	free(slots);
	slots = NULL;
	default_slot = 0;
}

const struct tb_instance *tb_registry_find(const char *name)
{
	for (size_t i = 0; i < n_slots; i++)
		if (strcmp(slots[i].inst.name, name) == 0)
			return &slots[i].inst;
	return NULL;
}

const struct tb_instance *tb_registry_default(void)
{
	return n_slots ? &slots[default_slot].inst : NULL;
}

size_t tb_registry_count(void)
{
	return n_slots;
}

const struct tb_instance *tb_registry_at(size_t i)
{
	return i < n_slots ? &slots[i].inst : NULL;
}
