/* Admission of writes to tasks' stdin. A write to a task that does not
 * read waits (in its supervisor) for room in the task's pipe, holding the
 * worker that runs it, and writes to one task take its stdin lock in turn:
 * unbounded, a flood of them took every worker and queued until the
 * verb's time ran out. Here a task has at most one write in progress in
 * this process, and all tasks together at most a quarter of the workers
 * (at least one); a write past either is refused at once with a message
 * that says why, and other calls keep their workers. Thread-safe. */
#ifndef TB_WRITE_GATE_H
#define TB_WRITE_GATE_H

#include <stddef.h>

/* Admits a write to task_id of sandbox_id: returns a ticket (>= 0) to
 * give back with tb_write_gate_leave once the write is over, or -1 with
 * the reason in err (naming the task or the server's bound). */
int tb_write_gate_enter(const char *sandbox_id, const char *task_id, char *err,
                        size_t errlen);

void tb_write_gate_leave(int ticket);

#endif /* TB_WRITE_GATE_H */
