/* Remote watches (remote_watch.h): one detached thread each, running the
 * supervisor's wait verb; a list of the running ones for the drain. */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/log.h"
#include "tasks/remote_watch.h"
#include "tasks/sup_client.h"
#include "tasks/task_id.h"

struct tb_remote_watch {
	struct tb_box box; /* the watch's own connection */
	char task_id[TB_TASK_ID_LEN + 1];
	struct tb_sup_wait_req req;
	struct tb_task_record answer; /* when answered: the thread's, then
	                                 the owner's to read */
	int fd;                       /* eventfd, written once at the end */
	int stopped; /* atomic: the owner or the drain stopped it */
	int end;     /* atomic: enum tb_remote_watch_end */
	int refs;    /* under lock: the thread's and the owner's */
	struct tb_remote_watch *next, *prev; /* under lock: running ones */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t none_running = PTHREAD_COND_INITIALIZER;
static struct tb_remote_watch *running;
static unsigned n_running;

/* Drops one reference under the lock; the last frees the watch. */
static void release(struct tb_remote_watch *w)
{
	bool last;

	pthread_mutex_lock(&lock);
	last = --w->refs == 0;
	pthread_mutex_unlock(&lock);
	if (last) {
		close(w->fd);
		tb_task_record_clear(&w->answer);
		free(w);
	}
}

static int stopped(void *arg)
{
	struct tb_remote_watch *w = arg;

	return __atomic_load_n(&w->stopped, __ATOMIC_ACQUIRE);
}

/* The watches all instances may run at once: an eighth of the soft
 * RLIMIT_NOFILE after 64 left for the rest of the process (a watch on e2b
 * holds six descriptors: four sockets, its eventfd and the wait's copy of
 * it), however many each instance's "watches" allow. */
static unsigned process_cap(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 8 > UINT_MAX)
		return UINT_MAX;
	return rl.rlim_cur > 64 ? (unsigned)((rl.rlim_cur - 64) / 8) : 0;
}

/* The watches of instance INST running now; under the lock. */
static unsigned running_for(const struct tb_instance *inst)
{
	unsigned n = 0;

	for (const struct tb_remote_watch *w = running; w; w = w->next)
		n += w->box.inst == inst;
	return n;
}

static void *watch(void *arg)
{
	struct tb_remote_watch *w = arg;
	struct tb_sup_stop stop = {stopped, w, 1};
	struct tb_sup_reply reply;
	char err[TB_ERR_MAX];
	int end = TB_REMOTE_WATCH_FAILED;
	uint64_t one = 1;

	memset(&reply, 0, sizeof reply);
	if (tb_box_connect(&w->box, err, sizeof err) == TASKBOX_OK) {
		tb_sup_wait(&w->box, w->task_id, &w->req, &stop, &reply);
		if (reply.outcome == TB_SUP_RECORD) {
			end = TB_REMOTE_WATCH_ANSWERED;
			w->answer = reply.rec;
			memset(&reply.rec, 0, sizeof reply.rec);
		} else if (!stopped(w))
			tb_log(TB_LOG_DEBUG,
			       "tasks: no watch of task %s in sandbox %s: %s",
			       w->task_id, w->box.id,
			       reply.outcome == TB_SUP_REFUSED ? reply.code
			                                       : reply.message);
		tb_sup_reply_clear(&reply);
	}
	tb_box_close(&w->box);
	__atomic_store_n(&w->end, end, __ATOMIC_RELEASE);
	if (write(w->fd, &one, sizeof one) < 0) {
		/* an eventfd far from its limit takes it */
	}
	pthread_mutex_lock(&lock);
	if (w->prev)
		w->prev->next = w->next;
	else
		running = w->next;
	if (w->next)
		w->next->prev = w->prev;
	if (--n_running == 0)
		pthread_cond_broadcast(&none_running);
	pthread_mutex_unlock(&lock);
	release(w);
	return NULL;
}

struct tb_remote_watch *tb_remote_watch_start(const struct tb_box *box,
                                              const char *task_id,
                                              const struct tb_sup_wait_req *req)
{
	struct tb_remote_watch *w = calloc(1, sizeof *w);
	pthread_attr_t attr;
	pthread_t thread;
	int rc = -1;

	if (!w)
		return NULL;
	w->box = *box;
	w->box.conn = NULL;
	snprintf(w->task_id, sizeof w->task_id, "%s", task_id);
	w->req = *req;
	w->refs = 2;
	w->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->fd < 0) {
		free(w);
		return NULL;
	}
	pthread_mutex_lock(&lock);
	if (running_for(box->inst) < box->inst->watches &&
	    n_running < process_cap() && pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&thread, &attr, watch, w);
		pthread_attr_destroy(&attr);
	}
	if (rc == 0) {
		/* The thread takes the lock before it unlinks itself. */
		w->next = running;
		if (running)
			running->prev = w;
		running = w;
		n_running++;
	}
	pthread_mutex_unlock(&lock);
	if (rc != 0) {
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
	__atomic_store_n(&w->stopped, 1, __ATOMIC_RELEASE);
	release(w);
}

void tb_remote_watch_drain(void)
{
	pthread_mutex_lock(&lock);
	for (struct tb_remote_watch *w = running; w; w = w->next)
		__atomic_store_n(&w->stopped, 1, __ATOMIC_RELEASE);
	while (n_running > 0)
		pthread_cond_wait(&none_running, &lock);
	pthread_mutex_unlock(&lock);
}
