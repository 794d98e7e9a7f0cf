/* Listing a sandbox's tasks: list_tasks and the MCP tasks/list. */
#ifndef TB_TASK_LIST_H
#define TB_TASK_LIST_H

#include <jansson.h>
#include <stddef.h>

#include "tasks/box.h"

/* The tasks of box (open), newest first, each an object with sandbox_id,
 * task_id, command (masked), state (after the liveness rule: a running
 * record whose supervisor is gone is "unknown"), exit_code, started_at,
 * finished_at, stdout_size, stderr_size and error. One exec of the
 * supervisor's list verb, plus two log reads per running task for its
 * sizes. Returns 0 with *out (a new array), or -1 with the reason in err. */
int tb_task_list(struct tb_box *box, json_t **out, char *err, size_t errlen);

/* Sorts list entries newest first (by started_at, then task_id, both
 * descending). Returns 0, or -1 when out of memory (list unchanged). */
int tb_task_list_sort(json_t *list);

/* A cursor names the last entry of a page: "<started_at>-<task_id>". */
#define TB_LIST_CURSOR_MAX 64

/* One page of a newest-first list: the entries after cursor (NULL: from
 * the start) whose state is state (NULL: any), at most page of them, as a
 * new array in *out; next receives the cursor of the following page, or
 * "" at the end. Entries are compared by (started_at, task_id), so tasks
 * started meanwhile never shift a page. Returns 0, or -1 when cursor is
 * not one this function made. */
int tb_task_list_page(json_t *all, const char *state, const char *cursor,
                      size_t page, json_t **out, char next[TB_LIST_CURSOR_MAX]);

#endif /* TB_TASK_LIST_H */
