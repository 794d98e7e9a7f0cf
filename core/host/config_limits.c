/* The "limits" section (see config_limits.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/principal.h"
#include "host/config_http.h"
#include "host/config_limits.h"

#define MAX_SANDBOXES_MAX 1000000
#define TIMEOUT_MAX 86400

static const char *const fields[] = {"max_sandboxes", "max_sandbox_timeout_s",
                                     NULL};

/* Validates one set of limits at path (the section or a principal's). */
static void check_set(struct tb_config_problems *p, const char *path,
                      json_t *set, bool top)
{
	static const char *const top_allowed[] = {
	    "max_sandboxes", "max_sandbox_timeout_s", "principals", NULL};
	json_t *v;

	if (!json_is_object(set)) {
		tb_config_problem(p, path, "must be an object, not %s",
		                  tb_config_type_name(set));
		return;
	}
	tb_config_unknown_keys(
	    p, path, set, top ? top_allowed : fields,
	    top ? "max_sandboxes, max_sandbox_timeout_s, principals"
	        : "max_sandboxes, max_sandbox_timeout_s");
	v = json_object_get(set, "max_sandboxes");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
	          json_integer_value(v) > MAX_SANDBOXES_MAX))
		tb_config_problem(p, path,
		                  "max_sandboxes: must be an integer from 0 "
		                  "to %d (live sandboxes a principal owns)",
		                  MAX_SANDBOXES_MAX);
	v = json_object_get(set, "max_sandbox_timeout_s");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
	          json_integer_value(v) > TIMEOUT_MAX))
		tb_config_problem(p, path,
		                  "max_sandbox_timeout_s: must be an integer "
		                  "from 1 to %d (seconds)",
		                  TIMEOUT_MAX);
}

void tb_config_check_limits(struct tb_config_problems *p, json_t *limits)
{
	json_t *who, *set;
	const char *name;

	if (!limits)
		return;
	check_set(p, "$.limits", limits, true);
	if (!json_is_object(limits))
		return;
	who = json_object_get(limits, "principals");
	if (!who)
		return;
	if (!json_is_object(who)) {
		tb_config_problem(
		    p, "$.limits.principals",
		    "must be an object of principal names, not %s",
		    tb_config_type_name(who));
		return;
	}
	json_object_foreach(who, name, set)
	{
		char path[320];
		struct tb_principal probe;

		snprintf(path, sizeof path, "$.limits.principals.%.255s", name);
		if (!tb_principal_set_name(&probe, name))
			tb_config_problem(p, path,
			                  "not a principal name (1 to %d bytes "
			                  "without control characters)",
			                  TB_PRINCIPAL_NAME_MAX);
		check_set(p, path, set, false);
	}
}

/* The set's fields, TB_LIMIT_NONE where absent. */
static struct tb_limit_set take_set(json_t *set)
{
	json_t *a = json_object_get(set, "max_sandboxes");
	json_t *b = json_object_get(set, "max_sandbox_timeout_s");
	struct tb_limit_set s = {
	    a ? (long)json_integer_value(a) : TB_LIMIT_NONE,
	    b ? (long)json_integer_value(b) : TB_LIMIT_NONE};
	return s;
}

struct tb_config_limits *tb_config_take_limits(json_t *limits, bool *failed)
{
	json_t *who, *set;
	const char *name;
	struct tb_config_limits *l;

	if (!limits)
		return NULL;
	l = calloc(1, sizeof *l);
	if (!l) {
		*failed = true;
		return NULL;
	}
	l->deflt = take_set(limits);
	who = json_object_get(limits, "principals");
	size_t n = who ? json_object_size(who) : 0;
	l->names = calloc(n ? n : 1, sizeof *l->names);
	l->sets = calloc(n ? n : 1, sizeof *l->sets);
	if (!l->names || !l->sets) {
		tb_config_free_limits(l);
		*failed = true;
		return NULL;
	}
	json_object_foreach(who, name, set)
	{
		l->names[l->n] = strdup(name);
		if (!l->names[l->n]) {
			tb_config_free_limits(l);
			*failed = true;
			return NULL;
		}
		l->sets[l->n++] = take_set(set);
	}
	return l;
}

void tb_config_free_limits(struct tb_config_limits *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->sets);
	free(l);
}

struct tb_limit_set tb_limits_for(const struct tb_config_limits *l,
                                  const char *name)
{
	struct tb_limit_set none = {TB_LIMIT_NONE, TB_LIMIT_NONE};

	if (!l)
		return none;
	struct tb_limit_set s = l->deflt;
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->names[i], name) != 0)
			continue;
		if (l->sets[i].max_sandboxes != TB_LIMIT_NONE)
			s.max_sandboxes = l->sets[i].max_sandboxes;
		if (l->sets[i].max_sandbox_timeout_s != TB_LIMIT_NONE)
			s.max_sandbox_timeout_s =
			    l->sets[i].max_sandbox_timeout_s;
	}
	return s;
}
