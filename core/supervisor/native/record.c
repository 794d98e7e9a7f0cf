/* The status record (format 1): encoding, the atomic replacement of
 * status.json, reading it back, the /proc checks of its pids, and the
 * heartbeat. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sup.h"

static void key(struct tb_str *out, const char *name)
{
	tb_str_cstr(out, ",\"");
	tb_str_cstr(out, name);
	tb_str_add(out, "\":", 2);
}

static void nullable(struct tb_str *out, const char *name, long long v)
{
	key(out, name);
	if (v == TB_NULL)
		tb_str_cstr(out, "null");
	else
		tb_str_fmt(out, "%lld", v);
}

static void boolean(struct tb_str *out, const char *name, int v)
{
	key(out, name);
	tb_str_cstr(out, v ? "true" : "false");
}

/* A string member, or null when V is NULL. */
static void string(struct tb_str *out, const char *name, const char *v)
{
	key(out, name);
	if (v)
		tb_json_str(out, v, strlen(v));
	else
		tb_str_cstr(out, "null");
}

void tb_record_json(const struct tb_record *rec, struct tb_str *out)
{
	/* key() writes the separator: format is always the first key. */
	tb_str_cstr(out, "{\"format\":1");
	tb_str_cstr(out, ",\"task_id\":");
	tb_json_str(out, rec->task_id, strlen(rec->task_id));
	tb_str_cstr(out, ",\"state\":");
	tb_json_str(out, rec->state, strlen(rec->state));
	tb_str_cstr(out, ",\"command\":");
	tb_json_str(out, rec->command.p ? rec->command.p : "",
	            rec->command.len);
	tb_str_cstr(out, ",\"cwd\":");
	if (rec->cwd)
		tb_json_str(out, rec->cwd, strlen(rec->cwd));
	else
		tb_str_cstr(out, "null");
	nullable(out, "timeout", rec->timeout);
	nullable(out, "started_at", rec->started_at);
	nullable(out, "finished_at", rec->finished_at);
	nullable(out, "exit_code", rec->exit_code);
	nullable(out, "supervisor_pid", rec->supervisor_pid);
	nullable(out, "supervisor_start", rec->supervisor_start);
	nullable(out, "pgid", rec->pgid);
	nullable(out, "pgid_start", rec->pgid_start);
	nullable(out, "stdout_bytes", (long long)rec->stdout_bytes);
	nullable(out, "stderr_bytes", (long long)rec->stderr_bytes);
	boolean(out, "stdout_truncated", rec->stdout_truncated);
	boolean(out, "stderr_truncated", rec->stderr_truncated);
	boolean(out, "cancel_requested", rec->cancel_requested);
	string(out, "error", rec->error);
	string(out, "stdin", rec->stdin_mode ? rec->stdin_mode : "null");
	string(out, "idempotency_key", rec->key);
	string(out, "signal", rec->signal);
	string(out, "ended_by", rec->ended_by);
	tb_str_cstr(out, "}");
}

void tb_add_members(struct tb_str *out, const struct tb_str *raw,
                    const struct tb_jobject *o, const struct tb_str *members)
{
	size_t close = raw->len;

	if (!members->len) {
		tb_str_add(out, raw->p, raw->len);
		return;
	}
	while (close > 0 && raw->p[close - 1] != '}')
		close--;
	tb_str_add(out, raw->p, close - 1);
	if (o->n)
		tb_str_cstr(out, ",");
	tb_str_add(out, members->p, members->len);
	tb_str_cstr(out, "}");
}

void tb_add_flag(struct tb_str *out, const struct tb_str *raw,
                 const struct tb_jobject *o, const char *name)
{
	struct tb_str flag = {0};

	tb_str_fmt(&flag, "\"%s\":true", name);
	tb_add_members(out, raw, o, &flag);
	tb_str_free(&flag);
}

int tb_write_all(int fd, const void *data, size_t n)
{
	const char *p = data;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Writes REC to DFD's status.json.tmp; returns its descriptor, or -1. */
static int write_tmp(int dfd, const struct tb_record *rec)
{
	struct tb_str data = {0};
	int fd, saved;

	tb_record_json(rec, &data);
	tb_str_add(&data, "\n", 1);
	fd = openat(dfd, "status.json.tmp",
	            O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0 && tb_write_all(fd, data.p, data.len) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		fd = -1;
	}
	saved = errno;
	tb_str_free(&data);
	errno = saved;
	return fd;
}

int tb_record_write(int dfd, const struct tb_record *rec)
{
	int fd = write_tmp(dfd, rec), saved;

	if (fd < 0)
		return -1;
	if (fsync(fd) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	if (close(fd) < 0 ||
	    renameat(dfd, "status.json.tmp", dfd, "status.json") < 0 ||
	    fsync(dfd) < 0)
		return -1;
	return 0;
}

int tb_record_publish(int dfd, const struct tb_record *rec, const int *logs,
                      size_t nlogs)
{
	int fd = write_tmp(dfd, rec), saved;

	if (fd < 0)
		return -1;
	if (renameat(dfd, "status.json.tmp", dfd, "status.json") < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	/* In place: from here on only durability is at stake, and the
	 * record stays whatever a sync says. */
	for (size_t i = 0; i < nlogs; i++)
		if (logs[i] >= 0 && fsync(logs[i]) < 0) {
			/* kept readable; not durable through a crash */
		}
	if (fsync(fd) < 0 || fsync(dfd) < 0) {
		/* as above */
	}
	close(fd);
	return 0;
}

int tb_status_read(const char *tdir, struct tb_str *raw, struct tb_jobject *o,
                   char *msg, size_t msglen)
{
	char path[TB_MAX_PATH + 64], buf[65536];
	const char *why, *name = strrchr(tdir, '/');
	ssize_t n;
	int fd;

	name = name ? name + 1 : tdir;
	raw->len = 0;
	snprintf(path, sizeof(path), "%s/status.json", tdir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(msg, msglen, "status.json of %s: %s", name,
		         strerror(errno));
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(msg, msglen, "status.json of %s: %s", name,
			         strerror(errno));
			close(fd);
			return -1;
		}
		tb_str_add(raw, buf, (size_t)n);
	}
	close(fd);
	while (raw->len && strchr(" \t\r\n", raw->p[raw->len - 1]))
		raw->p[--raw->len] = '\0';
	if (tb_jobject_parse(raw->p ? raw->p : "", raw->len, o, &why) < 0) {
		snprintf(msg, msglen, "status.json of %s is not %s", name,
		         strcmp(why, "not an object") == 0 ? "an object"
		                                           : "valid JSON");
		return -1;
	}
	return 1;
}

int tb_state_terminal(const struct tb_jobject *o)
{
	return tb_jstr_is(o, "state", "succeeded") ||
	       tb_jstr_is(o, "state", "failed") ||
	       tb_jstr_is(o, "state", "cancelled") ||
	       tb_jstr_is(o, "state", "timed_out");
}

int tb_proc_stat(long long pid, struct tb_proc *out)
{
	char path[64], line[1024], *p, *tok, *save;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%lld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	line[n] = '\0';
	/* Field 2 (comm) may hold anything: count after its last ')'. */
	p = strrchr(line, ')');
	if (!p)
		return -1;
	p++;
	for (int field = 3; (tok = strtok_r(p, " \n", &save)); field++) {
		p = NULL;
		if (field == 3)
			out->state = tok[0];
		if (field == 5)
			out->pgrp = strtoll(tok, NULL, 10);
		if (field == 22) {
			out->start = strtoll(tok, NULL, 10);
			return 0;
		}
	}
	return -1;
}

int tb_verified(long long pid, long long start)
{
	struct tb_proc proc;

	if (pid <= 0 || pid == TB_NULL || start == TB_NULL)
		return 0;
	if (tb_proc_stat(pid, &proc) < 0)
		return 0;
	return proc.start == start && !strchr("ZXx", proc.state);
}

void tb_heartbeat_write(int dfd)
{
	struct timespec ts;
	char line[32];
	int fd, n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(line, sizeof(line), "%lld\n",
	             (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	fd = openat(dfd, "heartbeat.tmp",
	            O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (tb_write_all(fd, line, (size_t)n) < 0) {
		close(fd);
		unlinkat(dfd, "heartbeat.tmp", 0);
		return;
	}
	close(fd);
	if (renameat(dfd, "heartbeat.tmp", dfd, "heartbeat") < 0)
		unlinkat(dfd, "heartbeat.tmp", 0);
}
