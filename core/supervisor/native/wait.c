/* The wait verb: answers once a task ends, its supervisor is gone, or a log
 * grows past an offset, or when its time is up; a host waiting from afar
 * then learns of the end in the time the answer takes to reach it, and,
 * given --page-limit, has a page of each log with it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sup.h"

/* Whether TDIR's log STREAM holds a byte at OFFSET (never when OFFSET is
 * negative: not asked for). */
static int grown(const char *tdir, const char *stream, long long offset)
{
	char path[TB_MAX_PATH + 80];
	struct stat st;

	if (offset < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", tdir, stream);
	return stat(path, &st) == 0 && (long long)st.st_size > offset;
}

/* The offset option's value, or -1 when it was not given. */
static long long offset_option(const char *name, const char *value)
{
	return value ? tb_int_option(name, value, 0, TB_MAX_OFFSET) : -1;
}

void tb_add_page(struct tb_str *out, const char *tdir, const char *stream,
                 long long offset, long long limit)
{
	char path[TB_MAX_PATH + 80];
	unsigned char *buf = malloc((size_t)limit);
	size_t got = 0;
	long long size = 0;
	struct stat st;
	ssize_t n;
	int fd;

	if (!buf)
		tb_oom();
	snprintf(path, sizeof(path), "%s/%s", tdir, stream);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		tb_refuse(TB_INTERNAL, "cannot open %s: %s", path,
		          strerror(errno));
	while (fd >= 0 && got < (size_t)limit) {
		n = pread(fd, buf + got, (size_t)limit - got,
		          (off_t)(offset + (long long)got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			tb_refuse(TB_INTERNAL, "cannot read %s: %s", path,
			          strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (fd >= 0) {
		if (fstat(fd, &st) == 0)
			size = (long long)st.st_size;
		close(fd);
	}
	if (got && size < offset + (long long)got)
		size = offset + (long long)got;
	tb_str_fmt(out,
	           "\"%s_page\":{\"offset\":%lld,\"size\":%lld,\"data\":\"",
	           stream, offset, size);
	tb_base64_add(out, buf, got);
	tb_str_cstr(out, "\"}");
	free(buf);
}

/* The pages asked for: limit 0 when none; offsets default to 0. */
struct pages {
	long long limit, stdout_at, stderr_at;
};

/* Reads the page options into P, refusing a page offset without
 * --page-limit. */
static void page_options(const struct tb_opts *opts, struct pages *p)
{
	if (!opts->page_limit && opts->stdout_page_offset)
		tb_refuse(TB_INVALID,
		          "--stdout-page-offset: only with --page-limit");
	if (!opts->page_limit && opts->stderr_page_offset)
		tb_refuse(TB_INVALID,
		          "--stderr-page-offset: only with --page-limit");
	p->limit = opts->page_limit
	               ? tb_int_option("--page-limit", opts->page_limit, 1,
	                               TB_PAGE_LIMIT_MAX)
	               : 0;
	p->stdout_at = opts->stdout_page_offset
	                   ? offset_option("--stdout-page-offset",
	                                   opts->stdout_page_offset)
	                   : 0;
	p->stderr_at = opts->stderr_page_offset
	                   ? offset_option("--stderr-page-offset",
	                                   opts->stderr_page_offset)
	                   : 0;
}

/* The members the answer adds to the record: the flag of a supervisor
 * found gone, and the pages when asked for. */
static void add_extras(struct tb_str *extra, const struct pages *p,
                       const char *tdir, int gone)
{
	if (gone)
		tb_str_cstr(extra, "\"supervisor_gone\":true");
	if (!p->limit)
		return;
	if (extra->len)
		tb_str_cstr(extra, ",");
	tb_add_page(extra, tdir, "stdout", p->stdout_at, p->limit);
	tb_str_cstr(extra, ",");
	tb_add_page(extra, tdir, "stderr", p->stderr_at, p->limit);
}

int tb_supervisor_pidfd(const struct tb_jobject *o)
{
	int fd = -1;
#ifdef SYS_pidfd_open
	long long pid = tb_jint(o, "supervisor_pid");

	if (pid > 0 && pid <= 0x7fffffff)
		fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (fd >= 0 && tb_supervisor_gone(o)) {
		close(fd);
		fd = -1;
	}
#else
	(void)o;
#endif
	return fd < 0 ? -1 : fd;
}

/* An inotify descriptor on directory TDIR for the events in MASK (a file
 * renamed in, a file written), and TDIR deleted or moved; -1 where none
 * can be had. */
static int dir_notifier(const char *tdir, uint32_t mask)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	mask |= IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
	if (fd >= 0 && inotify_add_watch(fd, tdir, mask) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void tb_read_off(int fd)
{
	char buf[4096];

	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0) {
	}
}

/* Pauses ms, or less once one of fds[0..2] (-1: left out) is readable.
 * Returns a mask of the readable ones (bit i for fds[i]). */
static unsigned pause_ms(const int fds[3], long long ms)
{
	struct pollfd p[3];
	unsigned i, ready = 0;

	for (i = 0; i < 3; i++)
		p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	if (fds[0] < 0 && fds[1] < 0 && fds[2] < 0)
		tb_sleep_ms((long)ms);
	else if (poll(p, 3, (int)ms) < 0 && errno != EINTR)
		tb_sleep_ms((long)ms);
	else
		for (i = 0; i < 3; i++)
			if (p[i].fd >= 0 && (p[i].revents & POLLIN))
				ready |= 1u << i;
	return ready;
}

int tb_verb_wait(const struct tb_opts *opts)
{
	char tdir[TB_MAX_PATH + 64];
	struct tb_str raw = {0}, out = {0}, extra = {0};
	struct pages pages;
	struct tb_jobject *o = malloc(sizeof(*o));
	long long wait = 3, end, left, out_at, err_at;
	struct stat st;
	int gone = 0, pidfd = -1, renamed = -1, written = -1, held = 0, rc;

	if (!o)
		tb_oom();
	if (opts->wait)
		wait = tb_int_option("--wait", opts->wait, 0, 60);
	out_at = offset_option("--stdout-offset", opts->stdout_offset);
	err_at = offset_option("--stderr-offset", opts->stderr_offset);
	page_options(opts, &pages);
	tb_task_dir(opts, tdir, sizeof(tdir));
	if (tb_read_record(tdir, &raw, o) == 0)
		tb_refuse(TB_NOT_FOUND, "task %s has no status record",
		          opts->id);
	end = tb_mono_ms() + wait * 1000;
	/* The supervisor's exit, the record put in place and, when offsets
	 * are given, a log written end a pause at once. The watches are in
	 * place before the first look, so nothing falls between. */
	if (!tb_state_terminal(o)) {
		pidfd = tb_supervisor_pidfd(o);
		renamed = dir_notifier(tdir, IN_MOVED_TO);
		if ((out_at >= 0 || err_at >= 0) && renamed >= 0)
			written = dir_notifier(tdir, IN_MODIFY);
	}
	while (!tb_state_terminal(o)) {
		long long pause;
		int fds[3], watched;

		if (tb_supervisor_gone(o)) {
			/* A supervisor that just finished wrote its final
			 * record. */
			tb_reread(tdir, &raw, o);
			gone = !tb_state_terminal(o);
			break;
		}
		left = end - tb_mono_ms();
		if (grown(tdir, "stdout", out_at) ||
		    grown(tdir, "stderr", err_at) || left <= 0)
			break;
		/* A write that settled nothing (a log written below its
		 * offset) holds the next one back: a task that writes all the
		 * time is looked at every TB_LOOK_MS, not at each write. The
		 * record put in place and the supervisor's exit still end the
		 * pause at once. */
		watched = pidfd >= 0 && renamed >= 0 &&
		          (written >= 0 || (out_at < 0 && err_at < 0));
		pause = watched && !held ? TB_WATCHED_LOOK_MS : TB_LOOK_MS;
		fds[0] = pidfd;
		fds[1] = renamed;
		fds[2] = held ? -1 : written;
		held = (pause_ms(fds, left < pause ? left : pause) & 4u) != 0;
		tb_read_off(renamed);
		tb_read_off(written);
		if (stat(tdir, &st) < 0)
			tb_refuse(TB_NOT_FOUND, "task %s was removed",
			          opts->id);
		tb_reread(tdir, &raw, o);
	}
	/* The pages are read after the record: a terminal record's pages
	 * hold every byte it counts. */
	add_extras(&extra, &pages, tdir, gone);
	tb_add_members(&out, &raw, o, &extra);
	tb_str_free(&extra);
	rc = tb_say_and_free(&out, &raw, o);
	/* After the answer: closing an inotify descriptor with a watch waits
	 * for the kernel's grace period, 0.4 ms here, several under load. */
	if (pidfd >= 0)
		close(pidfd);
	if (renamed >= 0)
		close(renamed);
	if (written >= 0)
		close(written);
	return rc;
}
