/* tb_dir_watch (dir_watch.h): one inotify instance, its watches by watch
 * descriptor (the kernel gives one directory one, however often it is
 * added), each with its subscribers and its supervisor's pidfd, and the
 * thread that waits for both in one epoll set and wakes them. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "tasks/dir_watch.h"
#include "tasks/pid_watch.h"

#define BUCKETS 64u

/* What every watch reports; IN_MODIFY is added for output subscribers
 * (never taken away while the watch lasts). */
#define BASE_MASK (IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

/* What the thread's epoll events carry: the instance, the stop, or a
 * directory's pidfd (PID_EVENT | its wd: a stale one only wakes). */
#define INO_EVENT 0u
#define STOP_EVENT 1u
#define PID_EVENT ((uint64_t)1 << 32)

struct dir {
	int wd;      /* -1 once the kernel ended the watch (IN_IGNORED) */
	int pid_fd;  /* its supervisor's pidfd, in the epoll set, or -1 */
	bool exited; /* the supervisor was seen to exit */
	struct tb_dir_watch *subs;
	struct dir *next; /* in its bucket */
};

struct tb_dir_watch {
	struct dir *dir;
	int fd; /* an eventfd */
	bool output;
	bool pid_watched; /* its directory's supervisor is watched too */
	int held;         /* atomic: output notices held back */
	int written;      /* atomic: a write came while held */
	struct tb_dir_watch *next; /* among its directory's subscribers */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ino = -1;     /* the instance, while the thread runs */
static int stop_fd = -1; /* an eventfd that ends the thread */
static int ep = -1;      /* the thread's epoll set */
static pthread_t thread;
static struct dir *buckets[BUCKETS];
static unsigned n_subs;

static struct dir **bucket(int wd)
{
	return &buckets[(unsigned)wd % BUCKETS];
}

static struct dir *find(int wd)
{
	struct dir *d = *bucket(wd);

	while (d && d->wd != wd)
		d = d->next;
	return d;
}

/* Takes d out of its bucket; lock held, d->wd >= 0. */
static void unlink_dir(struct dir *d)
{
	struct dir **at = bucket(d->wd);

	while (*at != d)
		at = &(*at)->next;
	*at = d->next;
}

static void fire(struct tb_dir_watch *w)
{
	uint64_t one = 1;

	if (write(w->fd, &one, sizeof one) < 0) {
		/* the counter is full: it polls readable anyway */
	}
}

static void fire_all(struct dir *d)
{
	for (struct tb_dir_watch *w = d->subs; w; w = w->next)
		fire(w);
}

/* Stops watching d's supervisor; lock held. */
static void drop_pid(struct dir *d)
{
	if (d->pid_fd < 0)
		return;
	epoll_ctl(ep, EPOLL_CTL_DEL, d->pid_fd, NULL);
	close(d->pid_fd);
	d->pid_fd = -1;
}

/* A pidfd event for the directory of wd: when its supervisor has exited,
 * wakes every subscriber and stops watching it; lock held. */
static void pid_event(int wd)
{
	struct dir *d = find(wd);
	struct pollfd p;

	if (!d || d->pid_fd < 0)
		return; /* stale */
	p = (struct pollfd){.fd = d->pid_fd, .events = POLLIN};
	if (poll(&p, 1, 0) != 1)
		return;
	drop_pid(d);
	d->exited = true;
	fire_all(d);
}

static bool output_event(const struct inotify_event *ev)
{
	return (ev->mask & IN_MODIFY) && ev->len > 0 &&
	       (strcmp(ev->name, "stdout") == 0 ||
	        strcmp(ev->name, "stderr") == 0);
}

/* Whether an event may change a record: the status record renamed into
 * place, or the directory (or its watch) gone. */
static bool record_event(const struct inotify_event *ev)
{
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
		return true;
	return (ev->mask & IN_MOVED_TO) && ev->len > 0 &&
	       strcmp(ev->name, "status.json") == 0;
}

/* Wakes the subscribers one event concerns; lock held. */
static void dispatch(const struct inotify_event *ev)
{
	struct dir *d;

	if (ev->mask & IN_Q_OVERFLOW) {
		for (unsigned b = 0; b < BUCKETS; b++)
			for (d = buckets[b]; d; d = d->next)
				for (struct tb_dir_watch *w = d->subs; w;
				     w = w->next)
					fire(w);
		return;
	}
	d = find(ev->wd);
	if (!d)
		return; /* removed by us: its IN_IGNORED comes late */
	bool record = record_event(ev), output = output_event(ev);
	for (struct tb_dir_watch *w = d->subs; w; w = w->next)
		if (record)
			fire(w);
		else if (output && w->output &&
		         __atomic_load_n(&w->held, __ATOMIC_ACQUIRE))
			__atomic_store_n(&w->written, 1, __ATOMIC_RELEASE);
		else if (output && w->output)
			fire(w);
	if (ev->mask & IN_IGNORED) {
		drop_pid(d);
		unlink_dir(d);
		d->wd = -1;
	}
}

/* The thread's descriptors, its own: the globals may be reset before it
 * has read them. */
struct instance {
	int ino, stop_fd, ep;
};

static void *run(void *arg)
{
	_Alignas(struct inotify_event) char buf[4096];
	struct instance *in = arg;
	struct epoll_event evs[32];
	ssize_t n;

	for (;;) {
		int k = epoll_wait(in->ep, evs, 32, -1);
		bool stop = false;

		if (k < 0 && errno != EINTR)
			break;
		pthread_mutex_lock(&lock);
		for (int i = 0; i < k; i++) {
			if (evs[i].data.u64 == STOP_EVENT)
				stop = true;
			else if (evs[i].data.u64 & PID_EVENT)
				pid_event((int)(uint32_t)evs[i].data.u64);
		}
		pthread_mutex_unlock(&lock);
		if (stop)
			break;
		while ((n = read(in->ino, buf, sizeof buf)) > 0) {
			pthread_mutex_lock(&lock);
			for (ssize_t at = 0; at < n;) {
				const struct inotify_event *ev =
				    (const struct inotify_event *)(buf + at);
				dispatch(ev);
				at += (ssize_t)(sizeof *ev + ev->len);
			}
			pthread_mutex_unlock(&lock);
		}
	}
	free(in);
	return NULL;
}

/* Opens the instance and starts the thread unless they run; lock held. */
static bool start(void)
{
	struct instance *in;

	if (ino >= 0)
		return true;
	struct epoll_event ev_ino = {.events = EPOLLIN, .data.u64 = INO_EVENT};
	struct epoll_event ev_stop = {.events = EPOLLIN,
	                              .data.u64 = STOP_EVENT};

	if (!(in = malloc(sizeof *in)))
		return false;
	in->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	in->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	in->ep = epoll_create1(EPOLL_CLOEXEC);
	if (in->ino >= 0 && in->stop_fd >= 0 && in->ep >= 0 &&
	    epoll_ctl(in->ep, EPOLL_CTL_ADD, in->ino, &ev_ino) == 0 &&
	    epoll_ctl(in->ep, EPOLL_CTL_ADD, in->stop_fd, &ev_stop) == 0 &&
	    pthread_create(&thread, NULL, run, in) == 0) {
		ino = in->ino;
		stop_fd = in->stop_fd;
		ep = in->ep;
		return true;
	}
	if (in->ino >= 0)
		close(in->ino);
	if (in->stop_fd >= 0)
		close(in->stop_fd);
	if (in->ep >= 0)
		close(in->ep);
	free(in);
	return false;
}

/* Watches the supervisor (pid, start) of d unless it is watched or gone;
 * fires w at once when it was seen to exit. Lock held. */
static void watch_pid(struct dir *d, struct tb_dir_watch *w, int64_t pid,
                      uint64_t since)
{
	struct epoll_event ev = {.events = EPOLLIN,
	                         .data.u64 = PID_EVENT | (uint32_t)d->wd};

	if (d->exited) {
		fire(w);
		return;
	}
	if (d->pid_fd >= 0 || pid <= 0)
		return;
	d->pid_fd = tb_pid_watch_dup(pid, since);
	if (d->pid_fd >= 0 &&
	    epoll_ctl(ep, EPOLL_CTL_ADD, d->pid_fd, &ev) < 0) {
		close(d->pid_fd);
		d->pid_fd = -1;
	}
}

struct tb_dir_watch *tb_dir_watch_add(const char *path, bool output,
                                      int64_t pid, uint64_t since)
{
	struct tb_dir_watch *w = calloc(1, sizeof *w);
	uint32_t mask = BASE_MASK | IN_MASK_ADD | (output ? IN_MODIFY : 0);
	struct dir *d = NULL;
	int wd = -1;

	if (!w)
		return NULL;
	w->output = output;
	w->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_lock(&lock);
	if (w->fd >= 0 && start())
		wd = inotify_add_watch(ino, path, mask);
	if (wd >= 0 && !(d = find(wd)) && (d = calloc(1, sizeof *d))) {
		d->wd = wd;
		d->pid_fd = -1;
		d->next = *bucket(wd);
		*bucket(wd) = d;
	}
	if (d) {
		w->dir = d;
		w->next = d->subs;
		d->subs = w;
		n_subs++;
		watch_pid(d, w, pid, since);
		w->pid_watched = d->pid_fd >= 0 || d->exited;
	} else if (wd >= 0) {
		inotify_rm_watch(ino, wd); /* new, and no memory to keep it */
	}
	pthread_mutex_unlock(&lock);
	if (d)
		return w;
	if (w->fd >= 0)
		close(w->fd);
	free(w);
	return NULL;
}

int tb_dir_watch_fd(const struct tb_dir_watch *w)
{
	return w->fd;
}

bool tb_dir_watch_pid_watched(const struct tb_dir_watch *w)
{
	return w->pid_watched;
}

bool tb_dir_watch_fired(struct tb_dir_watch *w)
{
	uint64_t count;
	bool fired = read(w->fd, &count, sizeof count) == (ssize_t)sizeof count;

	return __atomic_exchange_n(&w->written, 0, __ATOMIC_ACQ_REL) || fired;
}

void tb_dir_watch_hold(struct tb_dir_watch *w, bool held)
{
	__atomic_store_n(&w->held, held, __ATOMIC_RELEASE);
}

void tb_dir_watch_fire(struct tb_dir_watch *w)
{
	fire(w);
}

void tb_dir_watch_remove(struct tb_dir_watch *w)
{
	struct dir *d;
	struct tb_dir_watch **at;

	if (!w)
		return;
	pthread_mutex_lock(&lock);
	d = w->dir;
	for (at = &d->subs; *at != w; at = &(*at)->next)
		;
	*at = w->next;
	n_subs--;
	if (!d->subs) {
		drop_pid(d);
		if (d->wd >= 0) {
			unlink_dir(d);
			inotify_rm_watch(ino, d->wd);
		}
		free(d);
	}
	pthread_mutex_unlock(&lock);
	close(w->fd);
	free(w);
}

void tb_dir_watch_stop(void)
{
	uint64_t one = 1;
	int was_ino, was_stop_fd, was_ep;
	pthread_t was_thread;

	pthread_mutex_lock(&lock);
	if (ino < 0 || n_subs > 0 ||
	    write(stop_fd, &one, sizeof one) != (ssize_t)sizeof one) {
		pthread_mutex_unlock(&lock);
		return;
	}
	was_ino = ino;
	was_stop_fd = stop_fd;
	was_ep = ep;
	was_thread = thread;
	ino = stop_fd = ep = -1;
	pthread_mutex_unlock(&lock);
	pthread_join(was_thread, NULL);
	close(was_ino);
	close(was_stop_fd);
	close(was_ep);
}
