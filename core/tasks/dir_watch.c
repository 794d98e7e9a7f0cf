/* tb_dir_watch (dir_watch.h): one inotify instance, its watches by watch
 * descriptor (the kernel gives one directory one, however often it is
 * added), each with its subscribers, and the thread that wakes them. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "tasks/dir_watch.h"

#define BUCKETS 64u

/* What every watch reports; IN_MODIFY is added for output subscribers
 * (never taken away while the watch lasts). */
#define BASE_MASK (IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

struct dir {
	int wd; /* -1 once the kernel ended the watch (IN_IGNORED) */
	struct tb_dir_watch *subs;
	struct dir *next; /* in its bucket */
};

struct tb_dir_watch {
	struct dir *dir;
	int fd; /* an eventfd */
	bool output;
	int held;                  /* atomic: output notices held back */
	int written;               /* atomic: a write came while held */
	struct tb_dir_watch *next; /* among its directory's subscribers */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ino = -1;     /* the instance, while the thread runs */
static int stop_fd = -1; /* an eventfd that ends the thread */
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
		unlink_dir(d);
		d->wd = -1;
	}
}

/* The thread's descriptors, its own: the globals may be reset before it
 * has read them. */
struct instance {
	int ino, stop_fd;
};

static void *run(void *arg)
{
	_Alignas(struct inotify_event) char buf[4096];
	struct instance *in = arg;
	struct pollfd p[2] = {{.fd = in->ino, .events = POLLIN},
	                      {.fd = in->stop_fd, .events = POLLIN}};
	ssize_t n;

	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
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
	if (!(in = malloc(sizeof *in)))
		return false;
	in->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	in->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (in->ino >= 0 && in->stop_fd >= 0 &&
	    pthread_create(&thread, NULL, run, in) == 0) {
		ino = in->ino;
		stop_fd = in->stop_fd;
		return true;
	}
	if (in->ino >= 0)
		close(in->ino);
	if (in->stop_fd >= 0)
		close(in->stop_fd);
	free(in);
	return false;
}

struct tb_dir_watch *tb_dir_watch_add(const char *path, bool output)
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
		d->next = *bucket(wd);
		*bucket(wd) = d;
	}
	if (d) {
		w->dir = d;
		w->next = d->subs;
		d->subs = w;
		n_subs++;
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
	int was_ino, was_stop_fd;
	pthread_t was_thread;

	pthread_mutex_lock(&lock);
	if (ino < 0 || n_subs > 0 ||
	    write(stop_fd, &one, sizeof one) != (ssize_t)sizeof one) {
		pthread_mutex_unlock(&lock);
		return;
	}
	was_ino = ino;
	was_stop_fd = stop_fd;
	was_thread = thread;
	ino = stop_fd = -1;
	pthread_mutex_unlock(&lock);
	pthread_join(was_thread, NULL);
	close(was_ino);
	close(was_stop_fd);
}
