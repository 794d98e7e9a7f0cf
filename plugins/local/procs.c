/* Finding and stopping a sandbox's processes, and removing its files.
 *
 * A sandbox's processes are those whose environment holds the record
 * TASKBOX_SANDBOX_ID=<id>: exec puts it in every command's environment and
 * children inherit it, also across setsid, double forks and bubblewrap. A
 * process could scrub it from its own environment by re-executing itself
 * without it; that is not a boundary the local provider claims to hold.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "local_int.h"

#define ENVIRON_MAX (8u << 20)
#define MAX_PIDS 4096
#define TERM_GRACE_MS 1000
#define GIVE_UP_MS 5000

/* Nonzero when the NUL-separated records in buf hold one equal to rec. */
static int has_record(const char *buf, size_t len, const char *rec, size_t rlen)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *q = memchr(p, '\0', (size_t)(end - p));
		if (!q)
			q = end;
		if ((size_t)(q - p) == rlen && !memcmp(p, rec, rlen))
			return 1;
		p = q + 1;
	}
	return 0;
}

/* Reads the whole environment of pid into *buf (grown as needed) when the
 * process belongs to uid. Returns its length, or -1 to skip the process. */
static ssize_t read_environ(pid_t pid, uid_t uid, char **buf, size_t *cap)
{
	char path[40];
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_uid != uid)
		goto skip;
	for (;;) {
		if (len == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16384;
			char *nb;
			if (ncap > ENVIRON_MAX || !(nb = realloc(*buf, ncap)))
				break; /* judge by what was read */
			*buf = nb;
			*cap = ncap;
		}
		n = read(fd, *buf + len, *cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto skip;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return (ssize_t)len;
skip:
	close(fd);
	return -1;
}

/* Collects into pids (at most max) the processes of our uid, other than
 * this one, that carry the record rec. Returns how many. */
static size_t scan_marked(const char *rec, pid_t *pids, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	uid_t uid = geteuid();
	pid_t self = getpid();
	char *buf = NULL;
	size_t cap = 0, n = 0, rlen = strlen(rec);

	if (!d)
		return 0;
	while (n < max && (e = readdir(d))) {
		char *endp;
		long v = strtol(e->d_name, &endp, 10);
		ssize_t len;

		if (*endp || v <= 0 || (pid_t)v == self)
			continue;
		len = read_environ((pid_t)v, uid, &buf, &cap);
		if (len > 0 && has_record(buf, (size_t)len, rec, rlen))
			pids[n++] = (pid_t)v;
	}
	closedir(d);
	free(buf);
	return n;
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int tb_local_kill_marked(const char *id)
{
	char rec[sizeof(TB_LOCAL_MARKER) + TB_LOCAL_ID_LEN + 1];
	pid_t *pids = malloc(MAX_PIDS * sizeof(pid_t));
	struct timespec t0, pause = {0, 50 * 1000000L};
	long term_at = -1;
	int rc = EBUSY;

	if (!pids)
		return ENOMEM;
	snprintf(rec, sizeof(rec), "%s=%s", TB_LOCAL_MARKER, id);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		size_t n = scan_marked(rec, pids, MAX_PIDS);
		long now = elapsed_ms(&t0);
		int sig;

		if (n == 0) {
			rc = 0;
			break;
		}
		if (now > GIVE_UP_MS)
			break;
		if (term_at < 0) {
			sig = SIGTERM;
			term_at = now;
		} else if (now - term_at >= TERM_GRACE_MS) {
			sig = SIGKILL;
		} else {
			sig = 0;
		}
		for (size_t i = 0; sig && i < n; i++)
			kill(pids[i], sig);
		nanosleep(&pause, NULL);
	}
	free(pids);
	return rc;
}

/* Empties the directory open as fd, recursively, never following links. */
static int empty_dir(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		close(fd);
		return errno;
	}
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (unlinkat(dirfd(d), n, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			rc = rc ? rc : errno;
			continue;
		}
		if (depth > 256) {
			rc = rc ? rc : ELOOP;
			continue;
		}
		/* Our own directory that we may have made unwritable. */
		fchmodat(dirfd(d), n, 0700, AT_SYMLINK_NOFOLLOW);
		int sub =
		    openat(dirfd(d), n,
		           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = sub < 0 ? errno : empty_dir(sub, depth + 1);
		if (!err && unlinkat(dirfd(d), n, AT_REMOVEDIR) != 0)
			err = errno;
		if (err && err != ENOENT)
			rc = rc ? rc : err;
	}
	closedir(d);
	return rc;
}

int tb_local_rmtree(int dirfd, const char *name)
{
	int fd, rc;

	fchmodat(dirfd, name, 0700, AT_SYMLINK_NOFOLLOW);
	fd = openat(dirfd, name,
	            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : errno;
	rc = empty_dir(fd, 0);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = rc ? rc : errno;
	return rc;
}
