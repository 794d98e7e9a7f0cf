/* A session: the sandboxes it created (newest last) and which one is its
 * default. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/box.h"
#include "base/log.h"
#include "tasks/session.h"

struct entry {
	char id[TB_SANDBOX_REF_MAX];
	uint32_t lifetime_s;
	bool retained;
};

struct tb_session {
	pthread_mutex_t lock;        /* guards everything below */
	pthread_mutex_t create_lock; /* tb_session_create_lock */
	struct entry *entries;
	size_t n_entries, cap_entries;
};

struct tb_session *tb_session_new(void)
{
	struct tb_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->create_lock, NULL);
	return s;
}

/* Index of id in s's entries, or -1. Called with s->lock held. */
static long find(const struct tb_session *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->n_entries; i++)
		if (strcmp(s->entries[i].id, id) == 0)
			return (long)i;
	return -1;
}

int tb_session_add(struct tb_session *s, const char *sandbox_id,
                   uint32_t lifetime_s)
{
	int rc = 0;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->n_entries == s->cap_entries) {
		size_t cap = s->cap_entries ? s->cap_entries * 2 : 8;
		struct entry *e = realloc(s->entries, cap * sizeof(*e));

		if (e == NULL) {
			rc = -1;
			goto out;
		}
		s->entries = e;
		s->cap_entries = cap;
	}
	memset(&s->entries[s->n_entries], 0, sizeof(s->entries[s->n_entries]));
	snprintf(s->entries[s->n_entries].id,
	         sizeof(s->entries[s->n_entries].id), "%s", sandbox_id);
	s->entries[s->n_entries].lifetime_s = lifetime_s;
	s->n_entries++;
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

bool tb_session_default(struct tb_session *s, char *out, size_t outlen)
{
	bool found = false;

	if (!s)
		return false;
	pthread_mutex_lock(&s->lock);
	if (s->n_entries > 0) {
		snprintf(out, outlen, "%s", s->entries[s->n_entries - 1].id);
		found = true;
	}
	pthread_mutex_unlock(&s->lock);
	return found;
}

size_t tb_session_ids(struct tb_session *s, char (*out)[TB_SANDBOX_REF_MAX],
                      size_t max)
{
	size_t n = 0;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	for (size_t i = s->n_entries; i > 0 && n < max; i--)
		snprintf(out[n++], TB_SANDBOX_REF_MAX, "%s",
		         s->entries[i - 1].id);
	pthread_mutex_unlock(&s->lock);
	return n;
}

void tb_session_retain(struct tb_session *s, const char *sandbox_id)
{
	long i;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	i = find(s, sandbox_id);
	if (i >= 0)
		s->entries[i].retained = true;
	pthread_mutex_unlock(&s->lock);
}

uint32_t tb_session_lifetime(struct tb_session *s, const char *sandbox_id)
{
	uint32_t lifetime = 0;
	long i;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	i = find(s, sandbox_id);
	if (i >= 0)
		lifetime = s->entries[i].lifetime_s;
	pthread_mutex_unlock(&s->lock);
	return lifetime;
}

void tb_session_forget(struct tb_session *s, const char *sandbox_id)
{
	long i;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	i = find(s, sandbox_id);
	if (i >= 0) {
		memmove(&s->entries[i], &s->entries[i + 1],
		        (s->n_entries - (size_t)i - 1) * sizeof(*s->entries));
		s->n_entries--;
	}
	pthread_mutex_unlock(&s->lock);
}

void tb_session_create_lock(struct tb_session *s)
{
	if (s)
		pthread_mutex_lock(&s->create_lock);
}

void tb_session_create_unlock(struct tb_session *s)
{
	if (s)
		pthread_mutex_unlock(&s->create_lock);
}

void tb_session_end(struct tb_session *s)
{
	char err[TB_ERR_MAX];
	struct entry *list;
	size_t n, i;

	if (!s)
		return;
	list = s->entries;
	n = s->n_entries;
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
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->create_lock);
	free(s);
}
