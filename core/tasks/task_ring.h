/* A bounded, thread-safe memory of sandbox/task pairs: the oldest pair is
 * forgotten first once it is full. Tells, per server process, which tasks
 * were seen running (so that a task whose sandbox then vanished is
 * reported as ended with it rather than as a task that never was) and
 * whose orphaned group was already killed. */
#ifndef TB_TASK_RING_H
#define TB_TASK_RING_H

#include <pthread.h>
#include <stdbool.h>

#include "host/sandbox_ref.h"
#include "tasks/task_id.h"

#define TB_TASK_RING_MAX 512

struct tb_task_ring {
	pthread_mutex_t lock;
	unsigned next;
	char keys[TB_TASK_RING_MAX][TB_SANDBOX_REF_MAX + TB_TASK_ID_LEN + 2];
};

#define TB_TASK_RING_INIT                                                      \
	{                                                                      \
		.lock = PTHREAD_MUTEX_INITIALIZER                              \
	}

/* Remembers the pair; returns true when it was not remembered before. */
bool tb_task_ring_add(struct tb_task_ring *r, const char *sandbox_id,
                      const char *task_id);

/* True when the pair is remembered. */
bool tb_task_ring_has(struct tb_task_ring *r, const char *sandbox_id,
                      const char *task_id);

/* Forgets every pair of sandbox_id. */
void tb_task_ring_forget_sandbox(struct tb_task_ring *r,
                                 const char *sandbox_id);

/* Tasks this process saw running (task_view.c, task_tools.c). The tasks
 * of a sandbox this process destroys are forgotten (box.c): they ended
 * with a destroy that was asked for, not with the sandbox's expiry. */
extern struct tb_task_ring tb_tasks_seen_running;

#endif /* TB_TASK_RING_H */
