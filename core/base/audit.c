/* The audit trail of audit.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/audit.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;  /* under lock */
static char *path;   /* NULL: stderr */
static bool reads;   /* set before serving */
static bool open_;   /* set before serving */
static int reopen;   /* atomic: SIGHUP asked */
static int degraded; /* atomic */

/* Opens path for appending; -1 with errno. */
static int open_file(const char *p)
{
	return open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
	            0600);
}

int tb_audit_open(const char *p, bool r, char *why, size_t whylen)
{
	if (strcmp(p, "-") == 0) {
		fd = STDERR_FILENO;
	} else {
		fd = open_file(p);
		if (fd < 0) {
			snprintf(why, whylen, "cannot open %s: %s", p,
			         strerror(errno));
			return -1;
		}
		path = strdup(p);
		if (!path) {
			close(fd);
			fd = -1;
			snprintf(why, whylen, "out of memory");
			return -1;
		}
	}
	reads = r;
	open_ = true;
	return 0;
}

void tb_audit_close(void)
{
	pthread_mutex_lock(&lock);
	if (path && fd >= 0)
		close(fd);
	fd = -1;
	free(path);
	path = NULL;
	open_ = false;
	pthread_mutex_unlock(&lock);
}

bool tb_audit_enabled(void)
{
	return open_;
}

bool tb_audit_reads(void)
{
	return open_ && reads;
}

void tb_audit_reopen_soon(void)
{
	__atomic_store_n(&reopen, 1, __ATOMIC_RELEASE);
}

bool tb_audit_degraded(void)
{
	return __atomic_load_n(&degraded, __ATOMIC_ACQUIRE) != 0;
}

void tb_audit_time(char out[32])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03dZ", (int)(ts.tv_nsec / 1000000));
}

/* Opens the file again by its path if SIGHUP asked; lock held. A failure
 * keeps the old descriptor (the next record says whether it still
 * works). */
static void reopen_locked(void)
{
	if (!path || !__atomic_exchange_n(&reopen, 0, __ATOMIC_ACQ_REL))
		return;
	int nfd = open_file(path);
	if (nfd < 0)
		return;
	close(fd);
	fd = nfd;
}

int tb_audit_write(json_t *record, char *why, size_t whylen)
{
	char when[32];
	json_t *line;
	char *text;
	ssize_t n = -1;
	int err = 0;

	if (!open_)
		return 0;
	tb_audit_time(when);
	line = json_pack("{s:s}", "time", when);
	if (line)
		json_object_update(line, record);
	text =
	    line ? json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(line);
	if (!text) {
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	size_t len = strlen(text);
	text[len] = '\n'; /* json_dumps leaves room: its NUL */
	pthread_mutex_lock(&lock);
	reopen_locked();
	do
		n = fd >= 0 ? write(fd, text, len + 1) : -1;
	while (n < 0 && errno == EINTR);
	err = n < 0 ? errno : 0;
	pthread_mutex_unlock(&lock);
	free(text);
	if (n == (ssize_t)(len + 1)) {
		__atomic_store_n(&degraded, 0, __ATOMIC_RELEASE);
		return 0;
	}
	snprintf(why, whylen, "%s",
	         n < 0 ? strerror(err) : "a short write (the disk is full?)");
fail:
	__atomic_store_n(&degraded, 1, __ATOMIC_RELEASE);
	return -1;
}
