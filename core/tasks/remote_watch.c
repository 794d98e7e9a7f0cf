/* Remote watches (remote_watch.h): the waits on one sandbox share one
 * watch, a thread that runs the supervisor's watch verb with every task
 * and offset they wait for, hands each answer to the waits it concerns and
 * runs the verb again for the rest. */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "tasks/remote_watch.h"
#include "tasks/sup_client.h"
#include "tasks/task_id.h"

/* How long a watch gathers waits that join it before it runs the verb
 * again with them: a burst of waits costs one restart, not one each. */
#define GATHER_MS 20

/* Verbs in a row that end without an answer (their exec failed, their
 * process was killed) before the watch gives its waits up: they then look
 * at their task between pauses. */
#define FAILURES_MAX 3

/* A wait's subscription to its sandbox's watch. */
struct tb_remote_watch {
	struct sandbox_watch *sw; /* under lock: NULL once answered or
	                             given up */
	char task_id[TB_TASK_ID_LEN + 1];
	struct tb_sup_wait_req req;
	struct tb_task_record answer; /* when answered: the owner's to read */
	int fd;                       /* eventfd, written once at the end */
	int end;                      /* atomic: enum tb_remote_watch_end */
	bool stopped;                 /* under lock: the owner let it go */
	int interest; /* under lock: its place in the running verb's list,
	                 or -1 */
	int refs;     /* under lock: the watch's and the owner's */
	struct tb_remote_watch *next; /* under lock: the watch's list */
};

/* One interest of a running verb: a task and what is waited for. */
struct interest {
	char task_id[TB_TASK_ID_LEN + 1];
	struct tb_sup_wait_req req;
};

/* The watch of one sandbox. */
struct sandbox_watch {
	struct tb_box box; /* the watch's own connection */
	struct tb_remote_watch *subs;
	unsigned live; /* subscriptions not stopped: changed under the lock
	                  (atomically), read with or without it */
	int changed;   /* atomic: one joined that the verb lacks */
	int draining;  /* atomic */
	struct interest *run; /* under lock: the running verb's list */
	unsigned n_run;
	struct sandbox_watch *next; /* under lock: every watch */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t none_running = PTHREAD_COND_INITIALIZER;
static struct sandbox_watch *watches;
static unsigned n_watches;
static uint64_t generation; /* under lock: the last verb's */
static char lease[24];      /* this process's, for its verbs */
static pthread_once_t lease_once = PTHREAD_ONCE_INIT;

/* A name of this process's own for its verbs' lease: one process's newer
 * verb supersedes its older ones in a sandbox, never another's. */
static void make_lease(void)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
		r = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
	snprintf(lease, sizeof lease, "h%016" PRIx64, r);
}

/* Drops one reference under the lock; returns true when it was the last
 * (the caller then frees w outside the lock with free_sub). */
static bool unref(struct tb_remote_watch *w)
{
	return --w->refs == 0;
}

static void free_sub(struct tb_remote_watch *w)
{
	close(w->fd);
	tb_task_record_clear(&w->answer);
	free(w);
}

/* The watches all instances may run at once: an eighth of the soft
 * RLIMIT_NOFILE after 64 left for the rest of the process (each watch
 * holds a connection of its own), however many each instance's "watches"
 * allow. */
static unsigned process_cap(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 8 > UINT_MAX)
		return UINT_MAX;
	return rl.rlim_cur > 64 ? (unsigned)((rl.rlim_cur - 64) / 8) : 0;
}

/* Under the lock: the watch of BOX's sandbox, or NULL; and how many
 * watches BOX's instance runs. */
static struct sandbox_watch *find_watch(const struct tb_box *box,
                                        unsigned *of_instance)
{
	struct sandbox_watch *found = NULL;

	*of_instance = 0;
	for (struct sandbox_watch *sw = watches; sw; sw = sw->next) {
		if (sw->box.inst != box->inst)
			continue;
		(*of_instance)++;
		if (!found && strcmp(sw->box.id, box->id) == 0)
			found = sw;
	}
	return found;
}

/* Whether two waits ask the verb the same (wait_s aside). */
static bool same_interest(const struct interest *in, const char *task_id,
                          const struct tb_sup_wait_req *req)
{
	return strcmp(in->task_id, task_id) == 0 &&
	       in->req.stdout_offset == req->stdout_offset &&
	       in->req.stderr_offset == req->stderr_offset &&
	       in->req.page_limit == req->page_limit &&
	       in->req.stdout_page_offset == req->stdout_page_offset &&
	       in->req.stderr_page_offset == req->stderr_page_offset;
}

/* Under the lock: the place of W's interest in SW's running verb, or -1. */
static int running_interest(const struct sandbox_watch *sw,
                            const struct tb_remote_watch *w)
{
	for (unsigned i = 0; i < sw->n_run; i++)
		if (same_interest(&sw->run[i], w->task_id, &w->req))
			return (int)i;
	return -1;
}

/* Ends W with END under the lock: wakes its wait and leaves the watch's
 * list (the caller unlinks it); true when W is then to be freed. */
static bool finish(struct tb_remote_watch *w, enum tb_remote_watch_end end)
{
	uint64_t one = 1;

	__atomic_store_n(&w->end, end, __ATOMIC_RELEASE);
	if (write(w->fd, &one, sizeof one) < 0) {
		/* an eventfd far from its limit takes it */
	}
	if (w->sw && !w->stopped)
		__atomic_sub_fetch(&w->sw->live, 1, __ATOMIC_RELEASE);
	w->sw = NULL;
	return unref(w);
}

/* Under the lock: removes from SW's list every subscription that PICK
 * chooses, ending each with END; appends those to be freed to *dead. */
static void finish_where(struct sandbox_watch *sw,
                         bool (*pick)(const struct tb_remote_watch *, int),
                         int arg, enum tb_remote_watch_end end,
                         struct tb_remote_watch **dead)
{
	struct tb_remote_watch **p = &sw->subs;

	while (*p) {
		struct tb_remote_watch *w = *p;

		if (!pick(w, arg)) {
			p = &w->next;
			continue;
		}
		*p = w->next;
		if (finish(w, end)) {
			w->next = *dead;
			*dead = w;
		}
	}
}

static bool is_stopped(const struct tb_remote_watch *w, int unused)
{
	(void)unused;
	return w->stopped;
}

static bool has_interest(const struct tb_remote_watch *w, int index)
{
	return !w->stopped && w->interest == index;
}

static bool in_run(const struct tb_remote_watch *w, int unused)
{
	(void)unused;
	return !w->stopped && w->interest >= 0;
}

static bool any(const struct tb_remote_watch *w, int unused)
{
	(void)unused;
	(void)w;
	return true;
}

static void free_dead(struct tb_remote_watch *dead)
{
	while (dead) {
		struct tb_remote_watch *next = dead->next;

		free_sub(dead);
		dead = next;
	}
}

/* Appends "ID/SO/EO/PL/SPO/EPO" for IN to OUT (at least 160 bytes left);
 * pl is the page limit asked (0 once the answer's budget is spent). */
static size_t put_interest(char *out, const struct interest *in, size_t pl)
{
	char so[24] = "-", eo[24] = "-";

	if (in->req.stdout_offset >= 0)
		snprintf(so, sizeof so, "%" PRId64, in->req.stdout_offset);
	if (in->req.stderr_offset >= 0)
		snprintf(eo, sizeof eo, "%" PRId64, in->req.stderr_offset);
	return (size_t)sprintf(
	    out, "%s/%s/%s/%zu/%" PRIu64 "/%" PRIu64, in->task_id, so, eo, pl,
	    in->req.stdout_page_offset, in->req.stderr_page_offset);
}

/* Under the lock: makes SW's list of interests from its subscriptions
 * (one per distinct interest, at most TB_SUP_WATCH_MAX; those past it are
 * given up into *dead) and writes it as the verb's --tasks into *tasks
 * (new). Returns the longest wait_s asked, or 0 when out of memory. */
static unsigned build_run(struct sandbox_watch *sw, char **tasks,
                          struct tb_remote_watch **dead)
{
	unsigned wait_s = 1, n = 0;
	size_t budget = TB_SUP_WATCH_PAGE_BUDGET, len = 0;
	char *text;

	free(sw->run);
	sw->n_run = 0;
	sw->run = calloc(TB_SUP_WATCH_MAX, sizeof *sw->run);
	text = malloc((size_t)TB_SUP_WATCH_MAX * 160u);
	if (!sw->run || !text) {
		free(text);
		return 0;
	}
	for (struct tb_remote_watch *w = sw->subs; w; w = w->next) {
		int i;

		w->interest = -1;
		if (w->stopped)
			continue;
		i = running_interest(sw, w);
		if (i < 0 && sw->n_run < TB_SUP_WATCH_MAX) {
			i = (int)sw->n_run++;
			snprintf(sw->run[i].task_id, sizeof sw->run[i].task_id,
			         "%s", w->task_id);
			sw->run[i].req = w->req;
		}
		w->interest = i;
		if (i >= 0 && w->req.wait_s > wait_s)
			wait_s = w->req.wait_s;
	}
	/* Waits past the verb's limit look at their task instead. */
	finish_where(sw, is_stopped, 0, TB_REMOTE_WATCH_FAILED, dead);
	finish_where(sw, has_interest, -1, TB_REMOTE_WATCH_FAILED, dead);
	for (unsigned i = 0; i < sw->n_run; i++) {
		size_t pl = sw->run[i].req.page_limit;

		/* Pages past the budget are read by the wait after the
		 * answer instead. */
		pl = 2 * pl <= budget ? pl : 0;
		budget -= 2 * pl;
		if (n++)
			text[len++] = ',';
		len += put_interest(text + len, &sw->run[i], pl);
	}
	text[len] = '\0';
	*tasks = text;
	return wait_s < TB_REMOTE_WATCH_MAX_S ? wait_s : TB_REMOTE_WATCH_MAX_S;
}

/* The verb's exec is abandoned when a wait joined that it lacks, when no
 * wait is left, or for the drain. Called with or without the lock. */
static int run_cancelled(void *arg)
{
	struct sandbox_watch *sw = arg;

	return __atomic_load_n(&sw->live, __ATOMIC_ACQUIRE) == 0 ||
	       __atomic_load_n(&sw->changed, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&sw->draining, __ATOMIC_ACQUIRE);
}

/* Under the lock: hands the verb's answers to their subscriptions. */
static void deliver(struct sandbox_watch *sw, json_t *answers,
                    struct tb_remote_watch **dead)
{
	size_t k;
	json_t *a;

	json_array_foreach(answers, k, a)
	{
		json_int_t index =
		    json_integer_value(json_object_get(a, "index"));
		json_t *record = json_object_get(a, "record");
		char *text = NULL;

		if (index < 0 || index >= (json_int_t)sw->n_run)
			continue;
		if (json_is_object(record))
			text = json_dumps(record, JSON_COMPACT);
		for (struct tb_remote_watch **p = &sw->subs; *p;) {
			struct tb_remote_watch *w = *p;
			char err[TB_ERR_MAX];
			enum tb_remote_watch_end end = TB_REMOTE_WATCH_FAILED;

			if (w->stopped || w->interest != (int)index) {
				p = &w->next;
				continue;
			}
			/* A missing task, or a record that does not parse:
			 * the wait looks, and its view says what is wrong. */
			if (text && tb_task_record_parse(text, strlen(text),
			                                 w->task_id, &w->answer,
			                                 err, sizeof err) == 0)
				end = TB_REMOTE_WATCH_ANSWERED;
			*p = w->next;
			if (finish(w, end)) {
				w->next = *dead;
				*dead = w;
			}
		}
		free(text);
	}
}

/* Sleeps ms milliseconds. */
static void pause_ms(unsigned ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};

	nanosleep(&ts, NULL);
}

/* Runs one verb for SW's subscriptions; under the lock on entry and on
 * return. Returns false when the verb failed (counted by the caller). */
static bool run_once(struct sandbox_watch *sw, struct tb_remote_watch **dead)
{
	struct tb_sup_stop stop = {run_cancelled, sw, 1};
	struct tb_sup_reply reply;
	char err[TB_ERR_MAX], *tasks = NULL;
	uint64_t gen;
	unsigned wait_s;
	json_t *answer = NULL;
	bool connected = true, ok;

	wait_s = build_run(sw, &tasks, dead);
	if (wait_s == 0 || sw->n_run == 0) {
		free(tasks);
		finish_where(sw, in_run, 0, TB_REMOTE_WATCH_FAILED, dead);
		return wait_s != 0;
	}
	__atomic_store_n(&sw->changed, 0, __ATOMIC_RELEASE);
	gen = ++generation;
	pthread_mutex_unlock(&lock);

	memset(&reply, 0, sizeof reply);
	if (!sw->box.conn)
		connected =
		    tb_box_connect(&sw->box, err, sizeof err) == TASKBOX_OK;
	if (connected)
		answer = tb_sup_watch(&sw->box, tasks, wait_s, lease, gen,
		                      &stop, &reply);
	free(tasks);

	pthread_mutex_lock(&lock);
	if (answer) {
		deliver(sw, json_object_get(answer, "answers"), dead);
		json_decref(answer);
		return true;
	}
	ok = connected && run_cancelled(sw);
	if (!ok) {
		tb_log(TB_LOG_DEBUG,
		       "tasks: the watch of sandbox %s failed: %s", sw->box.id,
		       !connected                        ? err
		       : reply.outcome == TB_SUP_REFUSED ? reply.code
		                                         : reply.message);
		/* A refusal is for sure: no such verb there, no supervisor
		 * runs there. */
		if (!connected || reply.outcome == TB_SUP_REFUSED)
			finish_where(sw, in_run, 0, TB_REMOTE_WATCH_FAILED,
			             dead);
		pthread_mutex_unlock(&lock);
		tb_box_close(&sw->box);
		pthread_mutex_lock(&lock);
	}
	tb_sup_reply_clear(&reply);
	return ok;
}

static void *watch_thread(void *arg)
{
	struct sandbox_watch *sw = arg;
	struct tb_remote_watch *dead = NULL;
	unsigned failures = 0;

	pause_ms(GATHER_MS);
	pthread_mutex_lock(&lock);
	while (__atomic_load_n(&sw->live, __ATOMIC_ACQUIRE) > 0 &&
	       !__atomic_load_n(&sw->draining, __ATOMIC_ACQUIRE)) {
		bool joined;

		failures = run_once(sw, &dead) ? 0 : failures + 1;
		if (failures >= FAILURES_MAX) {
			finish_where(sw, in_run, 0, TB_REMOTE_WATCH_FAILED,
			             &dead);
			failures = 0;
		}
		joined = __atomic_load_n(&sw->changed, __ATOMIC_ACQUIRE);
		pthread_mutex_unlock(&lock);
		free_dead(dead);
		dead = NULL;
		/* Gather the waits that join with this one; after a failure,
		 * let the sandbox breathe before the next verb. */
		if (joined || failures)
			pause_ms(failures ? 100u * failures : GATHER_MS);
		pthread_mutex_lock(&lock);
	}
	finish_where(sw, any, 0, TB_REMOTE_WATCH_FAILED, &dead);
	for (struct sandbox_watch **p = &watches; *p; p = &(*p)->next)
		if (*p == sw) {
			*p = sw->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	free_dead(dead);
	/* The connection is closed before the drain may return: the provider
	 * is unloaded after it, and its close with it. */
	tb_box_close(&sw->box);
	free(sw->run);
	free(sw);
	pthread_mutex_lock(&lock);
	if (--n_watches == 0)
		pthread_cond_broadcast(&none_running);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Under the lock: a new watch of BOX's sandbox with its thread, or NULL. */
static struct sandbox_watch *start_watch(const struct tb_box *box)
{
	struct sandbox_watch *sw = calloc(1, sizeof *sw);
	pthread_attr_t attr;
	pthread_t thread;
	int rc = -1;

	if (!sw)
		return NULL;
	sw->box = *box;
	sw->box.conn = NULL;
	sw->live = 1; /* the first subscription, added by the caller */
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&thread, &attr, watch_thread, sw);
		pthread_attr_destroy(&attr);
	}
	if (rc != 0) {
		free(sw);
		return NULL;
	}
	sw->next = watches;
	watches = sw;
	n_watches++;
	return sw;
}

struct tb_remote_watch *tb_remote_watch_start(const struct tb_box *box,
                                              const char *task_id,
                                              const struct tb_sup_wait_req *req)
{
	struct tb_remote_watch *w = calloc(1, sizeof *w);
	struct sandbox_watch *sw;
	unsigned of_instance;

	if (!w)
		return NULL;
	pthread_once(&lease_once, make_lease);
	snprintf(w->task_id, sizeof w->task_id, "%s", task_id);
	w->req = *req;
	w->refs = 2;
	w->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->fd < 0) {
		free(w);
		return NULL;
	}
	pthread_mutex_lock(&lock);
	sw = find_watch(box, &of_instance);
	if (sw && !__atomic_load_n(&sw->draining, __ATOMIC_ACQUIRE)) {
		__atomic_add_fetch(&sw->live, 1, __ATOMIC_RELEASE);
		w->interest = running_interest(sw, w);
		if (w->interest < 0)
			__atomic_store_n(&sw->changed, 1, __ATOMIC_RELEASE);
	} else if (!sw && of_instance < box->inst->watches &&
	           n_watches < process_cap()) {
		sw = start_watch(box);
		w->interest = -1;
	} else {
		sw = NULL;
	}
	if (sw) {
		w->sw = sw;
		w->next = sw->subs;
		sw->subs = w;
	}
	pthread_mutex_unlock(&lock);
	if (!sw) {
		close(w->fd);
		free(w);
		return NULL;
	}
	return w;
}

int tb_remote_watch_fd(const struct tb_remote_watch *w)
{
	return w->fd;
}

enum tb_remote_watch_end tb_remote_watch_state(const struct tb_remote_watch *w)
{
	return (enum tb_remote_watch_end)__atomic_load_n(&w->end,
	                                                 __ATOMIC_ACQUIRE);
}

const struct tb_task_record *
tb_remote_watch_answer(const struct tb_remote_watch *w,
                       const struct tb_sup_wait_req **req)
{
	*req = &w->req;
	return &w->answer;
}

void tb_remote_watch_stop(struct tb_remote_watch *w)
{
	bool last;

	pthread_mutex_lock(&lock);
	if (w->sw && !w->stopped)
		__atomic_sub_fetch(&w->sw->live, 1, __ATOMIC_RELEASE);
	w->stopped = true;
	last = unref(w);
	pthread_mutex_unlock(&lock);
	if (last)
		free_sub(w);
}

void tb_remote_watch_drain(void)
{
	pthread_mutex_lock(&lock);
	for (struct sandbox_watch *sw = watches; sw; sw = sw->next)
		__atomic_store_n(&sw->draining, 1, __ATOMIC_RELEASE);
	while (n_watches > 0)
		pthread_cond_wait(&none_running, &lock);
	pthread_mutex_unlock(&lock);
}
