/* The "limits" section of the config file: quotas per principal
 * (docs/configuration.md). Private to the host layer's config files and
 * read by the tasks layer's quota rule. */
#ifndef TB_CONFIG_LIMITS_H
#define TB_CONFIG_LIMITS_H

#include <jansson.h>
#include <stdbool.h>

struct tb_config_problems;

#define TB_LIMIT_NONE (-1L)

/* One principal's limits; TB_LIMIT_NONE where unlimited. */
struct tb_limit_set {
	long max_sandboxes;         /* live sandboxes it owns */
	long max_sandbox_timeout_s; /* longest lifetime it may ask for */
};

struct tb_config_limits {
	struct tb_limit_set deflt; /* for every principal not named */
	char **names;              /* "principals" keys */
	struct tb_limit_set *sets; /* their overrides; NONE: the default's */
	size_t n;
};

/* Validates "limits" (NULL: absent). */
void tb_config_check_limits(struct tb_config_problems *p, json_t *limits);

/* Copies a validated "limits" section; NULL when absent, or with *failed
 * set when out of memory. */
struct tb_config_limits *tb_config_take_limits(json_t *limits, bool *failed);

void tb_config_free_limits(struct tb_config_limits *l);

/* name's limits: its override's fields where set, else the default's
 * (l NULL: unlimited). */
struct tb_limit_set tb_limits_for(const struct tb_config_limits *l,
                                  const char *name);

#endif /* TB_CONFIG_LIMITS_H */
