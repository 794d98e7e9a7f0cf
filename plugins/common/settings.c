/* Settings parsing shared by the plugins (settings.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"
#include "taskbox/provider.h"

static int name_valid(const char *s)
{
	if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') ||
	      (*s >= 'a' && *s <= 'z')))
		return 0;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
			return 0;
	return 1;
}

int tb_settings_env(json_t *env, const char *reserved,
                    int (*add)(void *ctx, char *entry), void *ctx, char *errbuf,
                    size_t errlen)
{
	const char *name;
	json_t *val;
	char *entry;
	int rc;

	if (!json_is_object(env)) {
		snprintf(errbuf, errlen,
		         "setting 'env' must be an object of NAME: string");
		return TASKBOX_E_INVALID;
	}
	json_object_foreach(env, name, val)
	{
		if (!name_valid(name) ||
		    (reserved && !strcmp(name, reserved))) {
			snprintf(
			    errbuf, errlen,
			    "setting 'env': '%.64s' is not a valid variable "
			    "name ([A-Za-z_][A-Za-z0-9_]*%s%s)",
			    name, reserved ? ", not " : "",
			    reserved ? reserved : "");
			return TASKBOX_E_INVALID;
		}
		if (!json_is_string(val) ||
		    strlen(json_string_value(val)) != json_string_length(val)) {
			snprintf(errbuf, errlen,
			         "setting 'env.%.64s' must be a string without "
			         "NUL bytes",
			         name);
			return TASKBOX_E_INVALID;
		}
		if (asprintf(&entry, "%s=%s", name, json_string_value(val)) <
		    0) {
			snprintf(errbuf, errlen, "out of memory");
			return TASKBOX_E_NOMEM;
		}
		if ((rc = add(ctx, entry)) != TASKBOX_OK)
			return rc;
	}
	return TASKBOX_OK;
}
