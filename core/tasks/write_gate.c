/* tb_write_gate (write_gate.h): a small table of the writes in progress,
 * one slot per task, under one mutex. */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/fd_budget.h"
#include "host/sandbox_ref.h"
#include "tasks/task_id.h"
#include "tasks/write_gate.h"

/* The most writes in progress at once, whatever the workers. */
#define SLOTS 64

struct slot {
	bool used;
	char sandbox_id[TB_SANDBOX_REF_MAX];
	char task_id[TB_TASK_ID_LEN + 1];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[SLOTS];
static unsigned in_progress;

/* A quarter of the workers, at least one, at most SLOTS. */
static unsigned bound(void)
{
	unsigned n = tb_fd_budget_get()->workers / 4;

	if (n == 0)
		n = 1;
	return n < SLOTS ? n : SLOTS;
}

int tb_write_gate_enter(const char *sandbox_id, const char *task_id, char *err,
                        size_t errlen)
{
	int free_slot = -1, ticket = -1;
	unsigned most = bound();

	pthread_mutex_lock(&lock);
	for (int i = 0; i < SLOTS; i++) {
		if (!slots[i].used) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		if (strcmp(slots[i].task_id, task_id) == 0 &&
		    strcmp(slots[i].sandbox_id, sandbox_id) == 0) {
			snprintf(err, errlen,
			         "task_id: task %s already has a write in "
			         "progress (its stdin is full while the task "
			         "does not read it); nothing was written: "
			         "retry later",
			         task_id);
			goto out;
		}
	}
	if (in_progress >= most || free_slot < 0) {
		snprintf(err, errlen,
		         "write_task: %u writes are in progress, waiting for "
		         "their tasks to read, as many as this server runs at "
		         "once; nothing was written: retry later",
		         in_progress);
		goto out;
	}
	ticket = free_slot;
	slots[ticket].used = true;
	snprintf(slots[ticket].sandbox_id, sizeof slots[ticket].sandbox_id,
	         "%s", sandbox_id);
	snprintf(slots[ticket].task_id, sizeof slots[ticket].task_id, "%s",
	         task_id);
	in_progress++;
out:
	pthread_mutex_unlock(&lock);
	return ticket;
}

void tb_write_gate_leave(int ticket)
{
	if (ticket < 0 || ticket >= SLOTS)
		return;
	pthread_mutex_lock(&lock);
	if (slots[ticket].used) {
		slots[ticket].used = false;
		in_progress--;
	}
	pthread_mutex_unlock(&lock);
}
