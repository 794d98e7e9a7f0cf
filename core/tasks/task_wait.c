/* The wait loop of get_task, cancel_task and tasks/result. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tasks/sup_client.h"
#include "tasks/task_wait.h"

/* A running task's full view (with its liveness check) is taken at least
 * this often while cheap probes see nothing. */
#define FULL_VIEW_EVERY_US 1000000u

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint32_t tb_wait_interval_ms(uint64_t cost_us, uint32_t left_ms)
{
	uint64_t ms = cost_us * 10 / 1000;

	if (ms < TB_WAIT_MIN_MS)
		ms = TB_WAIT_MIN_MS;
	if (ms > TB_WAIT_MAX_MS)
		ms = TB_WAIT_MAX_MS;
	return ms < left_ms ? (uint32_t)ms : left_ms;
}

static int64_t field_int(json_t *view, const char *key)
{
	return json_integer_value(json_object_get(view, key));
}

/* Whether a view ends the wait. */
static bool settled(json_t *view, const struct tb_page_req *pr,
                    enum tb_wait_until until)
{
	const char *state = json_string_value(json_object_get(view, "state"));

	if (!state || strcmp(state, "running") != 0)
		return true;
	if (until == TB_WAIT_TERMINAL)
		return false;
	return field_int(view, "stdout_size") > (int64_t)pr->stdout_offset ||
	       field_int(view, "stderr_size") > (int64_t)pr->stderr_offset;
}

/* Whether a log has a byte at offset (one read_file of one byte). */
static bool has_byte(struct tb_box *box, const char *task_id,
                     const char *stream, uint64_t offset)
{
	char path[128], err[TB_ERR_MAX];
	struct taskbox_buf data = {0};
	uint64_t size;
	int rc;

	snprintf(path, sizeof(path), TB_TASK_ROOT "/%s/%s", task_id, stream);
	rc = tb_box_read(box, path, offset, 1, &data, &size, err, sizeof(err));
	bool yes = rc == TASKBOX_OK && data.len > 0;
	tb_buf_free(&data);
	return yes;
}

/* The cheap check between two views: the status record's state and, for
 * TB_WAIT_CHANGE, a byte at each offset. True when a view is due. */
static bool probe(struct tb_box *box, const char *task_id,
                  const struct tb_page_req *pr, enum tb_wait_until until)
{
	struct tb_task_record rec;
	char err[TB_ERR_MAX];
	bool due;

	memset(&rec, 0, sizeof(rec));
	due = tb_sup_read_status(box, task_id, &rec, err, sizeof(err)) !=
	          TASKBOX_OK ||
	      rec.state != TB_TASK_RUNNING;
	tb_task_record_clear(&rec);
	if (!due && until == TB_WAIT_CHANGE)
		due = has_byte(box, task_id, "stdout", pr->stdout_offset) ||
		      has_byte(box, task_id, "stderr", pr->stderr_offset);
	return due;
}

int tb_task_wait(const struct tb_waiter *w, struct tb_box *box,
                 const char *task_id, const struct tb_page_req *pr,
                 const char *note, uint32_t wait_ms, enum tb_wait_until until,
                 json_t **result)
{
	uint64_t start = now_us(), before, cost, viewed;
	uint64_t limit_us = (uint64_t)wait_ms * 1000u;
	int rc;

	before = viewed = now_us();
	rc = tb_task_view(box, task_id, pr, note, result);
	cost = now_us() - before;
	if (rc != 0 || settled(*result, pr, until))
		return rc;
	for (;;) {
		uint64_t spent = now_us() - start;
		if (wait_ms != TB_WAIT_FOREVER && spent >= limit_us)
			return rc;
		uint32_t left =
		    wait_ms == TB_WAIT_FOREVER
		        ? UINT32_MAX
		        : (uint32_t)((limit_us - spent + 999) / 1000);
		/* Never right before the answer: a client may drop a
		 * progress notification that its result overtakes. */
		if (left >= TB_WAIT_MIN_MS)
			w->progress(w->arg,
			            (double)(field_int(*result, "stdout_size") +
			                     field_int(*result, "stderr_size")),
			            -1, NULL);
		if (w->sleep(w->arg, tb_wait_interval_ms(cost, left)))
			return rc; /* cancelled: nobody reads this answer */
		before = now_us();
		if (!probe(box, task_id, pr, until) &&
		    before - viewed < FULL_VIEW_EVERY_US) {
			cost = now_us() - before;
			continue;
		}
		json_decref(*result);
		*result = NULL;
		before = viewed = now_us();
		rc = tb_task_view(box, task_id, pr, note, result);
		cost = now_us() - before;
		if (rc != 0 || settled(*result, pr, until))
			return rc;
	}
}
