/* The session's sandboxes, newest last. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "box.h"
#include "log.h"
#include "session.h"

struct entry {
	char id[TB_SANDBOX_REF_MAX];
	uint32_t lifetime_s;
	bool retained;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *entries;
static size_t n_entries, cap_entries;

/* Index of id in entries, or -1. Called with lock held. */
static long find(const char *id)
{
	size_t i;

	for (i = 0; i < n_entries; i++)
		if (strcmp(entries[i].id, id) == 0)
			return (long)i;
	return -1;
}

int tb_session_add(const char *sandbox_id, uint32_t lifetime_s)
{
	int rc = 0;

	pthread_mutex_lock(&lock);
	if (n_entries == cap_entries) {
		size_t cap = cap_entries ? cap_entries * 2 : 8;
		struct entry *e = realloc(entries, cap * sizeof(*e));

		if (e == NULL) {
			rc = -1;
			goto out;
		}
		entries = e;
		cap_entries = cap;
	}
	memset(&entries[n_entries], 0, sizeof(entries[n_entries]));
	snprintf(entries[n_entries].id, sizeof(entries[n_entries].id), "%s",
	         sandbox_id);
	entries[n_entries].lifetime_s = lifetime_s;
	n_entries++;
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

bool tb_session_default(char *out, size_t outlen)
{
	bool found = false;

	pthread_mutex_lock(&lock);
	if (n_entries > 0) {
		snprintf(out, outlen, "%s", entries[n_entries - 1].id);
		found = true;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

size_t tb_session_ids(char (*out)[TB_SANDBOX_REF_MAX], size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = n_entries; i > 0 && n < max; i--)
		snprintf(out[n++], TB_SANDBOX_REF_MAX, "%s", entries[i - 1].id);
	pthread_mutex_unlock(&lock);
	return n;
}

void tb_session_retain(const char *sandbox_id)
{
	long i;

	pthread_mutex_lock(&lock);
	i = find(sandbox_id);
	if (i >= 0)
		entries[i].retained = true;
	pthread_mutex_unlock(&lock);
}

uint32_t tb_session_lifetime(const char *sandbox_id)
{
	uint32_t lifetime = 0;
	long i;

	pthread_mutex_lock(&lock);
	i = find(sandbox_id);
	if (i >= 0)
		lifetime = entries[i].lifetime_s;
	pthread_mutex_unlock(&lock);
	return lifetime;
}

void tb_session_forget(const char *sandbox_id)
{
	long i;

	pthread_mutex_lock(&lock);
	i = find(sandbox_id);
	if (i >= 0) {
		memmove(&entries[i], &entries[i + 1],
		        (n_entries - (size_t)i - 1) * sizeof(*entries));
		n_entries--;
	}
	pthread_mutex_unlock(&lock);
}

void tb_session_create_lock(void)
{
	pthread_mutex_lock(&create_lock);
}

void tb_session_create_unlock(void)
{
	pthread_mutex_unlock(&create_lock);
}

void tb_session_shutdown(void)
{
	char err[TB_ERR_MAX];
	struct entry *list;
	size_t n, i;

	pthread_mutex_lock(&lock);
	list = entries;
	n = n_entries;
	entries = NULL;
	n_entries = cap_entries = 0;
	pthread_mutex_unlock(&lock);
	for (i = 0; i < n; i++) {
		struct tb_box box;
		int rc;

		if (list[i].retained) {
			tb_log(TB_LOG_INFO, "keeping sandbox %s: it runs tasks",
			       list[i].id);
			continue;
		}
		if (tb_box_resolve(list[i].id, "sandbox_id", &box, err,
		                   sizeof(err)) < 0) {
			tb_log(TB_LOG_WARN, "%s", err);
			continue;
		}
		rc = tb_box_destroy(&box, err, sizeof(err));
		if (rc != TASKBOX_OK && rc != TASKBOX_E_NOT_FOUND)
			tb_log(TB_LOG_WARN, "cleanup: %s", err);
	}
	free(list);
}
