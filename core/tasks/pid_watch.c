/* The pidfd watches of pid_watch.h: a small table under one mutex. A check
 * polls the pidfd with a zero timeout while holding the mutex, so no other
 * thread can close the descriptor (and the number be reused) under it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tasks/pid_watch.h"

struct watch {
	int64_t pid;
	uint64_t start;
	int fd;
	uint64_t used; /* the clock at the last check */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct watch watches[TB_PID_WATCH_MAX];
static unsigned n_watches;
static uint64_t clock_now;

unsigned tb_pid_watch_cap(void)
{
	struct rlimit rl;
	unsigned cap = TB_PID_WATCH_MAX;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 8 < cap)
		cap = (unsigned)(rl.rlim_cur / 8);
	return cap;
}

/* With the lock held: the watch of (pid, start), or NULL. */
static struct watch *find(int64_t pid, uint64_t start)
{
	for (unsigned i = 0; i < n_watches; i++)
		if (watches[i].pid == pid && watches[i].start == start)
			return &watches[i];
	return NULL;
}

/* With the lock held: ends watch w (closing its fd). */
static void drop(struct watch *w)
{
	close(w->fd);
	*w = watches[--n_watches];
}

int tb_pid_watch_check(int64_t pid, uint64_t start)
{
	int rc = -1;

	pthread_mutex_lock(&lock);
	struct watch *w = find(pid, start);
	if (w) {
		struct pollfd p = {w->fd, POLLIN, 0};
		int n = poll(&p, 1, 0);
		if (n == 0) {
			w->used = ++clock_now;
			rc = 1;
		} else if (n > 0) {
			/* readable: the process has exited */
			drop(w);
			rc = 0;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

int tb_pid_watch_open(int64_t pid)
{
#ifdef SYS_pidfd_open
	if (pid <= 0 || pid > INT_MAX) {
		errno = EINVAL;
		return -1;
	}
	/* pidfds are close-on-exec from birth */
	long fd = syscall(SYS_pidfd_open, (pid_t)pid, 0);
	return fd < 0 ? -1 : (int)fd;
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

void tb_pid_watch_keep(int64_t pid, uint64_t start, int fd)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&lock);
	if (find(pid, start)) {
		/* another call got there first */
		pthread_mutex_unlock(&lock);
		close(fd);
		return;
	}
	unsigned cap = tb_pid_watch_cap();

	if (cap == 0) {
		pthread_mutex_unlock(&lock);
		close(fd);
		return;
	}
	while (n_watches >= cap) {
		struct watch *oldest = &watches[0];
		for (unsigned i = 1; i < n_watches; i++)
			if (watches[i].used < oldest->used)
				oldest = &watches[i];
		drop(oldest);
	}
	watches[n_watches++] = (struct watch){pid, start, fd, ++clock_now};
	pthread_mutex_unlock(&lock);
}

int tb_pid_watch_dup(int64_t pid, uint64_t start)
{
	int fd = -1;

	pthread_mutex_lock(&lock);
	struct watch *w = find(pid, start);
	if (w)
		fd = fcntl(w->fd, F_DUPFD_CLOEXEC, 0);
	pthread_mutex_unlock(&lock);
	return fd;
}

void tb_pid_watch_clear(void)
{
	pthread_mutex_lock(&lock);
	while (n_watches > 0)
		drop(&watches[n_watches - 1]);
	pthread_mutex_unlock(&lock);
}
