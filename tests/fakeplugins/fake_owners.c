/* A plugin of ABI 1.5 that keeps its sandboxes in memory with their
 * owners: create records req->owner, describe and list read it back. For
 * the unit tests of ownership and quotas (tests/unit/test_tenancy.c). */
#include <pthread.h>

#include "fake_ops.h"

#define SLOTS 32

struct slot {
	char id[16];
	char owner[TASKBOX_OWNER_MAX];
	int live;
};

static struct slot slots[SLOTS];
static int made;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The live slot of id, or NULL; lock held. */
static struct slot *find(const char *id)
{
	for (int i = 0; i < made; i++)
		if (slots[i].live && strcmp(slots[i].id, id) == 0)
			return &slots[i];
	return NULL;
}

static int owners_create(void *instance, const struct taskbox_create_req *req,
                         char *id, char *errbuf, size_t errlen)
{
	const char *owner = NULL;

	(void)instance;
	if (req->struct_size >=
	    offsetof(struct taskbox_create_req, owner) + sizeof req->owner)
		owner = req->owner;
	pthread_mutex_lock(&lock);
	if (made == SLOTS) {
		pthread_mutex_unlock(&lock);
		snprintf(errbuf, errlen, "no room for another sandbox");
		return TASKBOX_E_UNAVAILABLE;
	}
	struct slot *s = &slots[made++];
	snprintf(s->id, sizeof s->id, "own-%d", made);
	snprintf(s->owner, sizeof s->owner, "%s", owner ? owner : "");
	s->live = 1;
	snprintf(id, TASKBOX_SANDBOX_ID_MAX, "%s", s->id);
	pthread_mutex_unlock(&lock);
	return TASKBOX_OK;
}

static int owners_connect(void *instance, const char *sandbox_id, void **conn,
                          char *errbuf, size_t errlen)
{
	(void)instance;
	pthread_mutex_lock(&lock);
	struct slot *s = find(sandbox_id);
	pthread_mutex_unlock(&lock);
	if (!s) {
		snprintf(errbuf, errlen, "no sandbox %s", sandbox_id);
		return TASKBOX_E_NOT_FOUND;
	}
	*conn = s;
	return TASKBOX_OK;
}

static int owners_destroy(void *instance, const char *sandbox_id, char *errbuf,
                          size_t errlen)
{
	(void)instance;
	pthread_mutex_lock(&lock);
	struct slot *s = find(sandbox_id);
	if (s)
		s->live = 0;
	pthread_mutex_unlock(&lock);
	if (!s) {
		snprintf(errbuf, errlen, "no sandbox %s", sandbox_id);
		return TASKBOX_E_NOT_FOUND;
	}
	return TASKBOX_OK;
}

static void info_of(const struct slot *s, struct taskbox_sandbox_info *info)
{
	snprintf(info->id, sizeof info->id, "%.15s", s->id);
	snprintf(info->owner, sizeof info->owner, "%.255s", s->owner);
	info->created_s = 1700000000;
	info->expires_s = 0;
}

static int owners_describe(void *conn, struct taskbox_sandbox_info *info,
                           char *errbuf, size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	pthread_mutex_lock(&lock);
	info_of((const struct slot *)conn, info);
	pthread_mutex_unlock(&lock);
	return TASKBOX_OK;
}

static int owners_list(void *instance, const char *owner, taskbox_list_fn each,
                       void *arg, char *errbuf, size_t errlen)
{
	struct slot copy[SLOTS];
	int n;

	(void)instance;
	(void)errbuf;
	(void)errlen;
	pthread_mutex_lock(&lock);
	n = made;
	memcpy(copy, slots, sizeof copy);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++) {
		struct taskbox_sandbox_info info;

		if (!copy[i].live ||
		    (owner && strcmp(copy[i].owner, owner) != 0))
			continue;
		memset(&info, 0, sizeof info);
		info.struct_size = sizeof info;
		info_of(&copy[i], &info);
		if (each(arg, &info))
			break;
	}
	return TASKBOX_OK;
}

static const struct taskbox_provider desc = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    sizeof(struct taskbox_provider),
    "fake_owners",
    "1.0",
    "sandboxes in memory, with their owners",
    {fake_init, fake_fini, owners_create, owners_connect, fake_close, fake_exec,
     fake_read_file, owners_destroy, NULL, NULL},
    0,
    NULL,
    owners_describe,
    owners_list,
};

TASKBOX_PROVIDER_DEFINE(desc)
