/* Quotas per principal (see quota.h). */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/principal.h"
#include "host/config_limits.h"
#include "host/registry.h"
#include "tasks/box.h"
#include "tasks/ownership.h"
#include "tasks/quota.h"

#define STRIPES 16

static const struct tb_config_limits *limits;
static pthread_mutex_t stripes[STRIPES] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};

void tb_quota_set(const struct tb_config_limits *l)
{
	limits = l;
}

/* The stripe of a principal's create lock (FNV-1a of its name). */
static int stripe_of(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return (int)(h % STRIPES);
}

static int count_one(void *arg, const struct taskbox_sandbox_info *info)
{
	(void)info;
	++*(long *)arg;
	return 0;
}

/* Counts who's live sandboxes on every instance; -1 with err when one
 * cannot say. */
static long count_owned(const struct tb_principal *who, char *err,
                        size_t errlen)
{
	long n = 0;
	char why[TB_ERR_MAX];

	for (size_t i = 0; i < tb_registry_count(); i++) {
		if (tb_instance_list(tb_registry_at(i), who->name, count_one,
		                     &n, why, sizeof why) != TASKBOX_OK) {
			snprintf(err, errlen,
			         "max_sandboxes: %s's sandboxes cannot be "
			         "counted, so none is created: %s",
			         who->name, why);
			return -1;
		}
	}
	return n;
}

int tb_quota_admit(const struct tb_principal *who, uint32_t *lifetime_s,
                   bool given, struct tb_quota_ticket *t, char *err,
                   size_t errlen)
{
	struct tb_limit_set l = tb_limits_for(limits, who->name);
	long n;

	t->stripe = -1;
	if (l.max_sandbox_timeout_s != TB_LIMIT_NONE &&
	    *lifetime_s > (uint32_t)l.max_sandbox_timeout_s) {
		if (given) {
			snprintf(err, errlen,
			         "timeout: %u s is past max_sandbox_timeout_s, "
			         "%ld s for principal %s",
			         (unsigned)*lifetime_s, l.max_sandbox_timeout_s,
			         who->name);
			return -1;
		}
		*lifetime_s = (uint32_t)l.max_sandbox_timeout_s;
	}
	if (l.max_sandboxes == TB_LIMIT_NONE)
		return 0;
	t->stripe = stripe_of(who->name);
	pthread_mutex_lock(&stripes[t->stripe]);
	n = count_owned(who, err, errlen);
	if (n >= 0 && n >= l.max_sandboxes)
		snprintf(err, errlen,
		         "max_sandboxes: principal %s owns %ld live "
		         "sandboxes, its limit is %ld; kill_sandbox one first",
		         who->name, n, l.max_sandboxes);
	if (n < 0 || n >= l.max_sandboxes) {
		tb_quota_done(t);
		return -1;
	}
	return 0;
}

void tb_quota_done(struct tb_quota_ticket *t)
{
	if (t->stripe >= 0)
		pthread_mutex_unlock(&stripes[t->stripe]);
	t->stripe = -1;
}
