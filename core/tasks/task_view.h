/* What get_task and cancel_task return: the task's state after the
 * liveness rule, its saved fields, and one page of each log, masked and
 * decoded. Also the record part that start_task returns. */
#ifndef TB_TASK_VIEW_H
#define TB_TASK_VIEW_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "tasks/box.h"
#include "tasks/sup_record.h"

struct tb_page_req {
	uint64_t stdout_offset;
	uint64_t stderr_offset;
	size_t limit;
};

/* A running task's supervisor, as its status record names it. */
struct tb_task_sup {
	int64_t pid; /* 0: not known */
	uint64_t start;
};

/* Reads the task's record and pages through box (open). note, when not
 * NULL, is added to the error of a result whose state is not terminal.
 * sup, when not NULL, gets the supervisor of a task found running (else
 * is zeroed). Returns 0 with the result in *result, or 1 with a tool
 * error in *result (no such task, sandbox gone, ...). */
int tb_task_view(struct tb_box *box, const char *task_id,
                 const struct tb_page_req *pr, const char *note,
                 json_t **result, struct tb_task_sup *sup);

/* tb_task_view from what the supervisor's wait verb read in the sandbox
 * (sup_client.h): rec, running only if its supervisor was seen alive, and
 * page[0..1] (stdout, stderr) at pr's offsets, read after rec, whose data
 * this takes. Reads nothing more, unless the supervisor was found gone. */
int tb_task_view_given(struct tb_box *box, const char *task_id,
                       const struct tb_page_req *pr, const char *note,
                       const struct tb_task_record *rec,
                       struct taskbox_read_item page[2], json_t **result,
                       struct tb_task_sup *sup);

/* The handle and record fields (state, exit_code, started_at,
 * finished_at, command, error) for a state. rec may be NULL (nothing was
 * recorded). error may be NULL. Returns a new object or NULL. */
json_t *tb_task_fields(const char *sandbox_id, const char *task_id,
                       enum tb_task_state state,
                       const struct tb_task_record *rec, const char *error);

/* The view of a task this process saw running whose sandbox is now gone:
 * state unknown, ended_by "sandbox_expired", empty pages at pr's offsets,
 * why (the provider's message) in the error. A new object, or NULL. */
json_t *tb_task_view_sandbox_gone(const char *sandbox_id, const char *task_id,
                                  const struct tb_page_req *pr,
                                  const char *why);

/* tb_task_view_sandbox_gone's view when opening or connecting sandbox_id
 * failed with rc (TASKBOX_E_GONE or TASKBOX_E_NOT_FOUND) under a task this
 * process saw running; NULL otherwise (the failure is a tool error). */
json_t *tb_task_view_if_gone(int rc, const char *sandbox_id,
                             const char *task_id, const struct tb_page_req *pr,
                             const char *why);

/* Masks and decodes a page: a new JSON string. */
json_t *tb_page_text(const unsigned char *data, size_t len);

#endif /* TB_TASK_VIEW_H */
