/* The host the unit tests and fuzz targets hand to a plugin's parts when
 * they drive them directly: the C library's allocator and a log that drops
 * every line. Header only, so the fuzz scripts' clang builds need no extra
 * source; each file that includes it gets its own copy. */
#ifndef TB_TEST_QUIET_HOST_H
#define TB_TEST_QUIET_HOST_H

#include <stdlib.h>

#include "taskbox/provider.h"

/* A log callback that drops every line. */
static void quiet_log(enum taskbox_log_level level, const char *provider,
                      const char *message)
{
	(void)level;
	(void)provider;
	(void)message;
}

/* A host of this ABI: malloc, realloc, free and quiet_log. */
static const struct taskbox_host quiet_host = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    sizeof(struct taskbox_host),
    malloc,
    realloc,
    free,
    quiet_log,
};

#endif /* TB_TEST_QUIET_HOST_H */
