/* The wait loop of get_task, cancel_task and tasks/result. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error_json.h"
#include "base/fd_budget.h"
#include "tasks/dir_watch.h"
#include "tasks/pid_watch.h"
#include "tasks/remote_watch.h"
#include "tasks/sup_client.h"
#include "tasks/task_id.h"
#include "tasks/task_view.h"
#include "tasks/task_wait.h"

/* A running task's full view (with its liveness check) is taken at least
 * this often while cheap probes see nothing. */
#define FULL_VIEW_EVERY_US 1000000u

/* The longest pause of a wait that a remote watch wakes: past the watch's
 * longest wait and its exec's allowance, the wait looks again itself. */
#define REMOTE_PAUSE_MAX_MS 120000u

/* The longest pause between two looks for output of a watched wait whose
 * task's directory is not watched. */
#define WATCHED_OUTPUT_MAX_MS 100u

/* The pause of a wait that its supervisor's pidfd and its directory's
 * watch wake: a progress notification at least this often keeps a
 * client's request timeout (60 s in the official SDK) from running out. */
#define WATCHED_QUIET_MS 10000u

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
 * TB_WAIT_CHANGE where reads are not batched, a byte at each offset. True
 * when a view is due. Notes the supervisor of a running task in *pid and
 * *start. */
static bool probe(struct tb_box *box, const char *task_id,
                  const struct tb_page_req *pr, enum tb_wait_until until,
                  int64_t *pid, uint64_t *start)
{
	struct tb_task_record rec;
	char err[TB_ERR_MAX];
	bool due;

	memset(&rec, 0, sizeof(rec));
	due = tb_sup_read_status(box, task_id, &rec, err, sizeof(err)) !=
	          TASKBOX_OK ||
	      rec.state != TB_TASK_RUNNING;
	if (!due) {
		*pid = rec.supervisor_pid;
		*start = rec.supervisor_start;
	}
	tb_task_record_clear(&rec);
	if (!due && until == TB_WAIT_CHANGE)
		due = has_byte(box, task_id, "stdout", pr->stdout_offset) ||
		      has_byte(box, task_id, "stderr", pr->stderr_offset);
	return due;
}

struct tb_wait {
	struct tb_box box; /* owned, closed at the end */
	char task_id[TB_TASK_ID_LEN + 1];
	struct tb_page_req pr;
	char *note;
	uint32_t wait_ms;
	enum tb_wait_until until;
	uint64_t start;           /* when it began */
	uint64_t viewed;          /* when the last full view was taken */
	uint64_t cost;            /* what the last probe or view cost */
	json_t *view;             /* the last view, or a tool error */
	struct tb_task_sup sup;   /* its supervisor, from the status record */
	int rc;                   /* tb_task_view's for it */
	bool done;                /* the view settles it, or it failed */
	bool watched;             /* the supervisor's pidfd wakes this park */
	bool watched_remote;      /* the remote watch's end wakes this park */
	struct tb_dir_watch *dir; /* the task's directory and supervisor
	                             watched (its descriptor wakes the park),
	                             or NULL */
	bool armed;               /* arm() ran */
	bool keep_box; /* the box stays open between steps (tb_task_wait) */
	bool slot;     /* holds a parked wait's descriptor (fd_budget.h) */
	bool refused;  /* no such descriptor was left */
	bool held;     /* the last notice settled nothing: the directory watch
	                  holds notices of writes back until the next step,
	                  after a pause; the record put in place still wakes
	                  the park */
	struct tb_remote_watch *remote; /* the verb watching in the sandbox */
	bool remote_off;  /* a remote watch failed: look instead */
	bool unreachable; /* the box could not be connected again */
};

/* Connects the box again when a park closed it. False (the wait then
 * ends) when the sandbox can no longer be reached: with the task's end
 * when the sandbox went away under a task this process saw running (as
 * tb_task_view says it), else with the reason as a tool error. */
static bool box_ready(struct tb_wait *wait)
{
	char err[TB_ERR_MAX];
	json_t *gone;
	int rc;

	if (wait->box.conn)
		return true;
	if (wait->rc != 0 || wait->unreachable)
		return false;
	rc = tb_box_connect(&wait->box, err, sizeof err);
	if (rc == TASKBOX_OK)
		return true;
	gone = tb_task_view_if_gone(rc, wait->box.id, wait->task_id, &wait->pr,
	                            err);
	json_decref(wait->view);
	wait->view = gone ? gone : tb_error_json(err);
	wait->rc = gone ? 0 : 1;
	wait->done = wait->unreachable = true;
	return false;
}

/* Takes a full view into wait: from a remote watch's answer, its record
 * rec and pages page (tb_task_view_given), or, rec NULL, by reading. */
static void take_view(struct tb_wait *wait, const struct tb_task_record *rec,
                      struct taskbox_read_item *page)
{
	uint64_t before = now_us();

	if (!box_ready(wait)) {
		if (rec && page) {
			tb_buf_free(&page[0].data);
			tb_buf_free(&page[1].data);
		}
		return;
	}
	json_decref(wait->view);
	wait->view = NULL;
	wait->viewed = before;
	wait->rc = rec ? tb_task_view_given(&wait->box, wait->task_id,
	                                    &wait->pr, wait->note, rec, page,
	                                    &wait->view, &wait->sup)
	               : tb_task_view(&wait->box, wait->task_id, &wait->pr,
	                              wait->note, &wait->view, &wait->sup);
	wait->cost = now_us() - before;
	wait->done =
	    wait->rc != 0 || settled(wait->view, &wait->pr, wait->until);
}

static void view(struct tb_wait *wait)
{
	take_view(wait, NULL, NULL);
}

/* Takes the view the remote watch's answer holds, without a read: its
 * record and pages; by reading when its supervisor is gone (the liveness
 * rule then checks) or it holds no pages. */
static void view_answer(struct tb_wait *wait)
{
	const struct tb_sup_wait_req *req;
	const struct tb_task_record *rec =
	    tb_remote_watch_answer(wait->remote, &req);
	struct taskbox_read_item page[2];

	if (rec->supervisor_gone || tb_sup_wait_pages(rec, req, page) < 0)
		rec = NULL;
	take_view(wait, rec, page);
}

struct tb_wait *tb_wait_begin(struct tb_box *box, const char *task_id,
                              const struct tb_page_req *pr, const char *note,
                              uint32_t wait_ms, enum tb_wait_until until)
{
	struct tb_wait *wait = calloc(1, sizeof *wait);

	if (!wait || (note && !(wait->note = strdup(note)))) {
		free(wait);
		return NULL;
	}
	wait->box = *box;
	memset(box, 0, sizeof *box);
	snprintf(wait->task_id, sizeof wait->task_id, "%s", task_id);
	wait->pr = *pr;
	wait->wait_ms = wait_ms;
	wait->until = until;
	wait->start = now_us();
	view(wait); /* notes the supervisor, for tb_wait_wake_fd */
	return wait;
}

/* A watch on the task's directory (dir_watch.h; with its output for a
 * TB_WAIT_CHANGE wait), or NULL. The directory is reached through the
 * supervisor's working directory (the sandbox's home), and trusted only if
 * the watched supervisor is still alive after the watch was added: its pid
 * then still named it. */
static struct tb_dir_watch *dir_open(const struct tb_wait *wait)
{
	struct tb_dir_watch *dir;
	char path[128];

	snprintf(path, sizeof path, "/proc/%lld/cwd/" TB_TASK_ROOT "/%s",
	         (long long)wait->sup.pid, wait->task_id);
	dir = tb_dir_watch_add(path, wait->until == TB_WAIT_CHANGE,
	                       wait->sup.pid, wait->sup.start);
	if (dir && (!tb_dir_watch_pid_watched(dir) ||
	            tb_pid_watch_check(wait->sup.pid, wait->sup.start) != 1)) {
		tb_dir_watch_remove(dir);
		dir = NULL;
	}
	return dir;
}

/* Closes what arm() opened. */
static void disarm(struct tb_wait *wait)
{
	tb_dir_watch_remove(wait->dir);
	wait->dir = NULL;
	if (wait->remote)
		tb_remote_watch_stop(wait->remote);
	wait->remote = NULL;
}

/* Whether a log of the wait's task has a byte past its offset (true
 * when the sandbox cannot be reached: the wait's answer then says so). */
static bool new_output(struct tb_wait *wait)
{
	if (!box_ready(wait))
		return true;
	return has_byte(&wait->box, wait->task_id, "stdout",
	                wait->pr.stdout_offset) ||
	       has_byte(&wait->box, wait->task_id, "stderr",
	                wait->pr.stderr_offset);
}

/* Once per wait: a subscription whose one descriptor polls readable when
 * the supervisor exits or, sooner, when it renames a new status record
 * into place (the final record is in place a directory fsync and the
 * process's exit before the exit) or, for TB_WAIT_CHANGE, writes output
 * (dir_watch.h). Leaves dir NULL where the directory cannot be watched. */
static void arm(struct tb_wait *wait)
{
	wait->armed = true;
	if (tb_pid_watch_check(wait->sup.pid, wait->sup.start) != 1) {
		wait->armed = false; /* not watched yet: try again */
		return;
	}
	wait->dir = dir_open(wait);
	if (!wait->dir)
		return;
	/* Output written after the first view and before the watch was
	 * added woke nothing: look once. */
	if (wait->until == TB_WAIT_CHANGE && new_output(wait))
		tb_dir_watch_fire(wait->dir);
}

/* Whether the wait's directory watch fired since the last look. */
static bool notified(struct tb_wait *wait)
{
	return wait->dir && tb_dir_watch_fired(wait->dir);
}

/* Milliseconds left of the wait (UINT32_MAX without a limit). */
static uint32_t left_ms(const struct tb_wait *wait)
{
	uint64_t spent = now_us() - wait->start;
	uint64_t limit_us = (uint64_t)wait->wait_ms * 1000u;

	if (wait->wait_ms == TB_WAIT_FOREVER)
		return UINT32_MAX;
	return spent >= limit_us ? 0
	                         : (uint32_t)((limit_us - spent + 999) / 1000);
}

/* The descriptor of the wait's remote watch, started when there is none
 * (remote_watch.h), or -1 where none runs. */
static int remote_wake_fd(struct tb_wait *wait)
{
	uint32_t left = left_ms(wait);
	bool change = wait->until == TB_WAIT_CHANGE;
	struct tb_sup_wait_req req = {
	    .wait_s = left / 1000u + 1u,
	    .stdout_offset = change ? (int64_t)wait->pr.stdout_offset : -1,
	    .stderr_offset = change ? (int64_t)wait->pr.stderr_offset : -1,
	    /* A larger page than the verb reads: a view follows its answer */
	    .page_limit =
	        wait->pr.limit <= TB_SUP_PAGE_LIMIT_MAX ? wait->pr.limit : 0,
	    .stdout_page_offset = wait->pr.stdout_offset,
	    .stderr_page_offset = wait->pr.stderr_offset,
	};
	int fd;

	if (req.wait_s > TB_REMOTE_WATCH_MAX_S)
		req.wait_s = TB_REMOTE_WATCH_MAX_S;
	if (!wait->remote && !wait->remote_off && left > 0)
		wait->remote =
		    tb_remote_watch_start(&wait->box, wait->task_id, &req);
	fd = wait->remote
	         ? fcntl(tb_remote_watch_fd(wait->remote), F_DUPFD_CLOEXEC, 0)
	         : -1;
	/* Without a descriptor the watch cannot wake the wait: its pauses
	 * stay short, and a step after the watch's end takes the view. */
	wait->watched_remote = fd >= 0;
	return fd;
}

/* Takes the wait's share of the descriptor budget before it first parks
 * on a descriptor; false (refused set) when none is left. */
static bool take_slot(struct tb_wait *wait)
{
	if (wait->slot)
		return true;
	wait->slot = tb_fd_budget_wait_take();
	wait->refused = !wait->slot;
	return wait->slot;
}

int tb_wait_wake_fd(struct tb_wait *wait, bool *borrowed)
{
	int fd = -1;

	*borrowed = false;
	wait->watched = wait->watched_remote = false;
	if (wait->done || wait->sup.pid <= 0 || !take_slot(wait))
		return -1;
	if (!(wait->box.inst->plugin->features & TASKBOX_FEATURE_HOST_PIDS))
		return remote_wake_fd(wait);
	if (!wait->armed)
		arm(wait);
	if (wait->dir) {
		fd = tb_dir_watch_fd(wait->dir);
		*borrowed = true;
	} else {
		fd = tb_pid_watch_dup(wait->sup.pid, wait->sup.start);
	}
	wait->watched = fd >= 0;
	return fd;
}

bool tb_wait_refused(const struct tb_wait *wait)
{
	return wait->refused;
}

/* The pause before the next step of a wait whose supervisor's pidfd will
 * wake it at the end. With its directory watched too, whatever ends the
 * wait wakes it: the steps only send progress. Otherwise (or while its
 * notices are held) a wait for the end needs only a rare step, and new
 * output needs looking for, at a tenth of the silence so far (so a quiet
 * task costs ever less), 20..100 ms. */
static uint32_t watched_interval_ms(const struct tb_wait *wait, uint32_t ms,
                                    uint64_t spent_us)
{
	uint64_t tenth = spent_us / 10000u;

	if (wait->dir && !wait->held)
		return WATCHED_QUIET_MS;
	if (wait->until == TB_WAIT_TERMINAL && !wait->held)
		return TB_WAIT_MAX_MS;
	if (tenth > WATCHED_OUTPUT_MAX_MS)
		tenth = WATCHED_OUTPUT_MAX_MS;
	return tenth > ms ? (uint32_t)tenth : ms;
}

bool tb_wait_pending(struct tb_wait *wait, const struct tb_waiter *w,
                     uint32_t *ms)
{
	uint64_t spent = now_us() - wait->start;
	uint32_t left = left_ms(wait);

	if (wait->done || left == 0)
		return false;
	/* Never right before the answer: a client may drop a progress
	 * notification that its result overtakes. */
	if (left >= TB_WAIT_MIN_MS)
		w->progress(w->arg,
		            (double)(field_int(wait->view, "stdout_size") +
		                     field_int(wait->view, "stderr_size")),
		            -1, NULL);
	*ms = tb_wait_interval_ms(wait->cost, left);
	if (wait->watched_remote) {
		/* The watch ends within its wait_s, and wakes the wait. */
		*ms = left < REMOTE_PAUSE_MAX_MS ? left : REMOTE_PAUSE_MAX_MS;
	} else if (wait->watched) {
		uint32_t longer = watched_interval_ms(wait, *ms, spent);
		*ms = longer < left ? longer : left;
	}
	/* Parked, a wait keeps nothing open but what wakes it: the box is
	 * connected again when a step needs it (a provider sharing this
	 * host's pids keeps idle connections; elsewhere only a watched wait,
	 * whose steps are rare, lets its box go). */
	if (!wait->keep_box &&
	    (wait->watched || wait->watched_remote ||
	     (wait->box.inst->plugin->features & TASKBOX_FEATURE_HOST_PIDS)))
		tb_box_close(&wait->box);
	return true;
}

/* A step of a watched wait: has the supervisor exited (a poll of its
 * pidfd), or, for TB_WAIT_CHANGE without a watch on the directory, is
 * there output past the offsets? True when a view is due. */
static bool watched_probe(struct tb_wait *wait)
{
	if (tb_pid_watch_check(wait->sup.pid, wait->sup.start) != 1)
		return true;
	return wait->until == TB_WAIT_CHANGE && !wait->dir && new_output(wait);
}

void tb_wait_step(struct tb_wait *wait)
{
	uint64_t before = now_us();

	/* A remote watch answers for the task while it runs; its end (or a
	 * failure, after which the wait looks between pauses) calls for a
	 * view. */
	if (wait->remote) {
		enum tb_remote_watch_end end =
		    tb_remote_watch_state(wait->remote);

		/* Still watching: nothing to look at, unless the wait's
		 * time is up: its answer is then a view taken now. */
		if (end == TB_REMOTE_WATCH_RUNNING) {
			if (left_ms(wait) <= TB_WAIT_MIN_MS)
				view(wait);
			return;
		}
		if (end == TB_REMOTE_WATCH_ANSWERED)
			view_answer(wait);
		else
			view(wait);
		tb_remote_watch_stop(wait->remote);
		wait->remote = NULL;
		wait->remote_off = end == TB_REMOTE_WATCH_FAILED;
		return;
	}

	/* Watched, the pidfd stands for the status record and the liveness
	 * check of a full view; a replaced record is read at once. */
	if (wait->watched) {
		bool notice = notified(wait);

		wait->held = false;
		if (notice || watched_probe(wait)) {
			view(wait);
			/* A task that writes below a far offset notifies at
			 * every write: its next writes wait for a pause. */
			wait->held = notice && !wait->done;
		} else {
			wait->cost = now_us() - before;
		}
		if (wait->dir)
			tb_dir_watch_hold(wait->dir, wait->held);
		return;
	}
	/* Where reads go out as one batch, a full view costs one round trip,
	 * as a probe does: a change then ends the wait without a second trip.
	 * Not for a wait for the end, whose views would read the new pages of
	 * a task that keeps writing again and again. */
	if (wait->until == TB_WAIT_CHANGE && tb_box_batches_reads(&wait->box)) {
		view(wait);
		return;
	}
	if (!box_ready(wait))
		return;
	if (!probe(&wait->box, wait->task_id, &wait->pr, wait->until,
	           &wait->sup.pid, &wait->sup.start) &&
	    before - wait->viewed < FULL_VIEW_EVERY_US) {
		wait->cost = now_us() - before;
		return;
	}
	view(wait);
}

/* Ends wait like tb_wait_end, but hands its box back into box (open)
 * when box is not NULL. */
static int end_into(struct tb_wait *wait, json_t **result, struct tb_box *box)
{
	int rc = wait->rc;

	disarm(wait);
	if (wait->slot)
		tb_fd_budget_wait_put();
	*result = wait->view;
	if (box)
		*box = wait->box;
	else
		tb_box_close(&wait->box);
	free(wait->note);
	free(wait);
	return rc;
}

int tb_wait_end(struct tb_wait *wait, json_t **result)
{
	return end_into(wait, result, NULL);
}

int tb_task_wait(const struct tb_waiter *w, struct tb_box *box,
                 const char *task_id, const struct tb_page_req *pr,
                 const char *note, uint32_t wait_ms, enum tb_wait_until until,
                 json_t **result)
{
	struct tb_wait *wait =
	    tb_wait_begin(box, task_id, pr, note, wait_ms, until);
	uint32_t ms;

	if (!wait) {
		*result = NULL;
		return -1;
	}
	wait->keep_box = true;
	while (tb_wait_pending(wait, w, &ms) && !w->sleep(w->arg, ms))
		tb_wait_step(wait);
	return end_into(wait, result, box);
}
