/* A ring of sandbox/task pairs. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tasks/task_ring.h"

struct tb_task_ring tb_tasks_seen_running = TB_TASK_RING_INIT;

/* The slot holding key, or TB_TASK_RING_MAX. Called with the lock held. */
static unsigned find(const struct tb_task_ring *r, const char *key)
{
	unsigned i;

	for (i = 0; i < TB_TASK_RING_MAX; i++)
		if (strcmp(r->keys[i], key) == 0)
			return i;
	return TB_TASK_RING_MAX;
}

/* Writes the pair's key into key (sizeof a ring's keys[0] bytes). */
static void key_of(char *key, size_t len, const char *sandbox_id,
                   const char *task_id)
{
	snprintf(key, len, "%s/%s", sandbox_id, task_id);
}

bool tb_task_ring_add(struct tb_task_ring *r, const char *sandbox_id,
                      const char *task_id)
{
	char key[sizeof(r->keys[0])];
	bool added;

	key_of(key, sizeof(key), sandbox_id, task_id);
	pthread_mutex_lock(&r->lock);
	if ((added = find(r, key) == TB_TASK_RING_MAX)) {
		memcpy(r->keys[r->next], key, sizeof(key));
		r->next = (r->next + 1) % TB_TASK_RING_MAX;
	}
	pthread_mutex_unlock(&r->lock);
	return added;
}

bool tb_task_ring_has(struct tb_task_ring *r, const char *sandbox_id,
                      const char *task_id)
{
	char key[sizeof(r->keys[0])];
	bool found;

	key_of(key, sizeof(key), sandbox_id, task_id);
	pthread_mutex_lock(&r->lock);
	found = find(r, key) != TB_TASK_RING_MAX;
	pthread_mutex_unlock(&r->lock);
	return found;
}

void tb_task_ring_forget_sandbox(struct tb_task_ring *r, const char *sandbox_id)
{
	size_t n = strlen(sandbox_id);
	unsigned i;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < TB_TASK_RING_MAX; i++)
		if (strncmp(r->keys[i], sandbox_id, n) == 0 &&
		    r->keys[i][n] == '/')
			r->keys[i][0] = '\0';
	pthread_mutex_unlock(&r->lock);
}
