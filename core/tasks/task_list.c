/* A sandbox's tasks from the supervisor's list verb, and paging them. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/sup_client.h"
#include "tasks/task_id.h"
#include "tasks/task_list.h"
#include "tasks/task_view.h"

/* The size of a running task's log (its record says 0 until the end). */
static int64_t log_size(struct tb_box *box, const char *task_id,
                        const char *stream)
{
	char path[128], err[TB_ERR_MAX];
	struct taskbox_buf data = {0};
	uint64_t size = 0;
	int rc;

	snprintf(path, sizeof(path), TB_TASK_ROOT "/%s/%s", task_id, stream);
	rc = tb_box_read(box, path, 0, 1, &data, &size, err, sizeof(err));
	tb_buf_free(&data);
	if (rc != TASKBOX_OK || size == UINT64_MAX)
		return 0;
	return (int64_t)size;
}

static json_t *int_or_null(json_t *v)
{
	return json_is_integer(v) ? json_incref(v) : json_null();
}

/* One list entry from one record the list verb printed. */
/* A string field of a record, or null when absent or not a string. */
static json_t *str_field(json_t *rec, const char *key)
{
	const char *v = json_string_value(json_object_get(rec, key));

	return v ? json_string(v) : json_null();
}

/* Adds stdin, idempotency_key, signal and ended_by to item, as a view
 * shows them (tb_task_ended_by) for the shown state. */
static int add_input_fields(json_t *item, json_t *rec, const char *state)
{
	const char *mode = json_string_value(json_object_get(rec, "stdin"));
	enum tb_task_state st;
	const char *ended = NULL;
	bool running = strcmp(state, "running") == 0;

	if (tb_task_state_parse(state, &st) == 0)
		ended = tb_task_ended_by(
		    st, json_string_value(json_object_get(rec, "ended_by")),
		    json_is_true(json_object_get(rec, "supervisor_gone")));
	return json_object_set_new(item, "stdin",
	                           json_string(mode ? mode : "null")) ||
	               json_object_set_new(item, "idempotency_key",
	                                   str_field(rec, "idempotency_key")) ||
	               json_object_set_new(
	                   item, "signal",
	                   running ? json_null() : str_field(rec, "signal")) ||
	               json_object_set_new(item, "ended_by",
	                                   ended ? json_string(ended)
	                                         : json_null())
	           ? -1
	           : 0;
}

static json_t *entry(struct tb_box *box, json_t *rec)
{
	const char *task_id =
	    json_string_value(json_object_get(rec, "task_id"));
	const char *state = json_string_value(json_object_get(rec, "state"));
	const char *command =
	    json_string_value(json_object_get(rec, "command"));
	const char *error = json_string_value(json_object_get(rec, "error"));
	bool running = state && strcmp(state, "running") == 0;
	int64_t out_size, err_size;
	json_t *item;

	if (!task_id || !tb_task_id_valid(task_id))
		return NULL; /* not a task of ours: never shown */
	if (!state) {
		state = "unknown";
	} else if (running &&
	           json_is_true(json_object_get(rec, "supervisor_gone"))) {
		state = "unknown";
		error = TB_SUP_GONE_WHY;
	}
	if (running && strcmp(state, "running") == 0) {
		out_size = log_size(box, task_id, "stdout");
		err_size = log_size(box, task_id, "stderr");
	} else {
		out_size =
		    json_integer_value(json_object_get(rec, "stdout_bytes"));
		err_size =
		    json_integer_value(json_object_get(rec, "stderr_bytes"));
	}
	item = json_pack(
	    "{s:s,s:s,s:o,s:s,s:o,s:o,s:o,s:I,s:I,s:o}", "sandbox_id", box->id,
	    "task_id", task_id, "command",
	    command
	        ? tb_page_text((const unsigned char *)command, strlen(command))
	        : json_null(),
	    "state", state, "exit_code",
	    int_or_null(json_object_get(rec, "exit_code")), "started_at",
	    int_or_null(json_object_get(rec, "started_at")), "finished_at",
	    int_or_null(json_object_get(rec, "finished_at")), "stdout_size",
	    (json_int_t)out_size, "stderr_size", (json_int_t)err_size, "error",
	    error ? tb_page_text((const unsigned char *)error, strlen(error))
	          : json_null());
	if (item && add_input_fields(item, rec, state) < 0) {
		json_decref(item);
		item = NULL;
	}
	return item;
}

/* The (started_at, task_id) key of an entry. */
static void key_of(json_t *e, int64_t *started, const char **task_id)
{
	json_t *s = json_object_get(e, "started_at");

	*started = json_is_integer(s) ? json_integer_value(s) : -1;
	*task_id = json_string_value(json_object_get(e, "task_id"));
	if (!*task_id)
		*task_id = "";
}

/* qsort order: newest first, then task_id descending. */
static int newest_first(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int64_t sx, sy;
	const char *ix, *iy;

	key_of(x, &sx, &ix);
	key_of(y, &sy, &iy);
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return -strcmp(ix, iy);
}

int tb_task_list_sort(json_t *list)
{
	size_t i, n = json_array_size(list);
	json_t **sorted = calloc(n ? n : 1, sizeof(*sorted));

	if (!sorted)
		return -1;
	for (i = 0; i < n; i++)
		sorted[i] = json_incref(json_array_get(list, i));
	qsort(sorted, n, sizeof(*sorted), newest_first);
	json_array_clear(list);
	for (i = 0; i < n; i++)
		json_array_append_new(list, sorted[i]);
	free(sorted);
	return 0;
}

int tb_task_list(struct tb_box *box, json_t **out, char *err, size_t errlen)
{
	json_t *records, *rec;
	size_t i;

	if (tb_sup_list(box, &records, err, errlen) < 0)
		return -1;
	*out = json_array();
	json_array_foreach(records, i, rec)
	{
		json_t *e = entry(box, rec);
		if (e)
			json_array_append_new(*out, e);
	}
	json_decref(records);
	/* The verb sorts too; paging depends on the order, so make sure. */
	if (tb_task_list_sort(*out) < 0) {
		json_decref(*out);
		*out = NULL;
		snprintf(err, errlen, "out of memory listing tasks");
		return -1;
	}
	return 0;
}

/* True when e comes after the cursor's entry in newest-first order. */
static bool after(json_t *e, int64_t c_started, const char *c_id)
{
	int64_t started;
	const char *id;

	key_of(e, &started, &id);
	if (started != c_started)
		return started < c_started;
	return strcmp(id, c_id) < 0;
}

int tb_task_list_page(json_t *all, const char *state, const char *cursor,
                      size_t page, json_t **out, char next[TB_LIST_CURSOR_MAX])
{
	int64_t c_started = 0;
	char c_id[TB_TASK_ID_LEN + 1] = "";
	char tail;
	json_t *e;
	size_t i;

	next[0] = '\0';
	*out = NULL;
	if (cursor && (sscanf(cursor, "%" SCNd64 "-%32[0-9a-f]%c", &c_started,
	                      c_id, &tail) != 2 ||
	               !tb_task_id_valid(c_id) || c_started < -1))
		return -1;
	*out = json_array();
	json_array_foreach(all, i, e)
	{
		const char *st = json_string_value(json_object_get(e, "state"));
		if (cursor && !after(e, c_started, c_id))
			continue;
		if (state && (!st || strcmp(st, state) != 0))
			continue;
		if (json_array_size(*out) == page) {
			int64_t started;
			const char *id;

			key_of(json_array_get(*out, page - 1), &started, &id);
			snprintf(next, TB_LIST_CURSOR_MAX, "%" PRId64 "-%s",
			         started, id);
			break;
		}
		json_array_append(*out, e);
	}
	return 0;
}
