/* The start verb: checks, the task directory under the root's lock, the
 * double fork, and the supervisor process's set-up (docs/supervisor.md,
 * start). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sup.h"

/* Closes every descriptor above 2 except KEEP. */
static void close_inherited(int keep)
{
	int fds[256];
	size_t n = 0;
	struct dirent *d;
	DIR *dir;

	do {
		n = 0;
		dir = opendir("/proc/self/fd");
		if (!dir) {
			for (int fd = 3; fd < 1024; fd++)
				if (fd != keep)
					close(fd);
			return;
		}
		while ((d = readdir(dir)) && n < 256) {
			int fd = atoi(d->d_name);

			if (fd > 2 && fd != keep && fd != dirfd(dir) &&
			    d->d_name[0] != '.')
				fds[n++] = fd;
		}
		closedir(dir);
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
	} while (n == 256);
}

/* The supervisor process, after the second fork: never returns. */
static _Noreturn void daemon_main(const char *tdir, struct tb_record *rec,
                                  const struct tb_job *setup)
{
	struct tb_secrets secrets;
	struct tb_job job = {0};
	char err[TB_MSG_MAX], signame[32];
	struct tb_proc proc;
	int null, code = 0;

	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	close_inherited(setup->ready_fd);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	/* A launcher that is gone must not kill the supervisor through the
	 * ready pipe, nor a file size limit through the logs (write fails
	 * instead, as in python3, which ignores both at start-up). */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	job = *setup;
	job.rec = rec;
	job.timeout = rec->timeout;
	rec->supervisor_pid = getpid();
	rec->supervisor_start =
	    tb_proc_stat(getpid(), &proc) == 0 ? proc.start : TB_NULL;
	tb_secrets_load(&secrets);
	job.secrets = &secrets;
	job.dfd = open(tdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (job.dfd < 0) {
		snprintf(err, sizeof(err), "%.400s: %s", tdir, strerror(errno));
		goto fail;
	}
	job.log_out = openat(job.dfd, "stdout",
	                     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	job.log_err = openat(job.dfd, "stderr",
	                     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (job.log_out < 0 || job.log_err < 0) {
		snprintf(err, sizeof(err), "creating the logs: %s",
		         strerror(errno));
		goto fail;
	}
	if (tb_run(&job, err, sizeof(err)) == 0)
		goto out;
fail:
	code = 1;
	tb_run_kill_group(rec);
	tb_group_await_gone(rec->pgid, TB_KILL_SETTLE_MS, job.dfd);
	rec->state = "failed";
	rec->finished_at = (long long)time(NULL);
	rec->ended_by = tb_ended_by(job.reason);
	if (job.sig)
		rec->signal = tb_signal_name(job.sig, signame, sizeof(signame));
	free(rec->error);
	rec->error = malloc(strlen(err) + 32);
	if (rec->error)
		sprintf(rec->error, "supervisor error: %s", err);
	{
		int dfd = open(tdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd >= 0)
			tb_record_write(dfd, rec);
	}
out:
	tb_secrets_free(&secrets);
	tb_str_free(&rec->command);
	free(rec->error);
	_exit(code);
}

/* TEXT with the values of SECRETS masked, into OUT (NUL-terminated). */
static void masked(const char *text, const struct tb_secrets *secrets,
                   struct tb_str *out)
{
	struct tb_masker m;
	const unsigned char *shown;
	size_t len;

	if (!secrets->n) {
		tb_str_cstr(out, text);
		return;
	}
	tb_masker_init(&m, secrets);
	len = tb_mask_feed(&m, text, strlen(text), 1, &shown);
	tb_str_add(out, shown, len);
	tb_masker_free(&m);
}

/* The record's cwd, masked like the command: a secret in a path never
 * shows in a record or in an error. */
static struct tb_str shown_cwd;

/* Fills the first record's fields known before the command starts. */
static void record_init(struct tb_record *rec, const struct tb_opts *o,
                        long long timeout, const struct tb_secrets *secrets)
{
	memset(rec, 0, sizeof(*rec));
	memcpy(rec->task_id, o->id, 33);
	rec->state = "running";
	if (o->cwd) {
		masked(o->cwd, secrets, &shown_cwd);
		rec->cwd = shown_cwd.p;
	}
	rec->stdin_mode = o->stdin_mode ? o->stdin_mode : "null";
	rec->key = o->key;
	rec->timeout = timeout;
	rec->started_at = rec->finished_at = rec->exit_code = TB_NULL;
	rec->supervisor_pid = rec->supervisor_start = TB_NULL;
	rec->pgid = rec->pgid_start = TB_NULL;
	masked(o->command, secrets, &rec->command);
}

/* Reads TDIR's status.json as saved into RAW (left empty when there is
 * none). */
static void read_raw(const char *tdir, struct tb_str *raw)
{
	char path[TB_MAX_PATH + 64], buf[65536];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/status.json", tdir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		tb_str_add(raw, buf, (size_t)n);
	}
	close(fd);
}

/* Writes RAW (the record as saved, with its newline) to stdout. */
static void print_raw(const struct tb_str *raw)
{
	for (size_t off = 0; off < raw->len;) {
		ssize_t n = write(1, raw->p + off, raw->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
}

/* The stdin mode of start's options; refuses --rows and --cols without
 * tty, and sizes out of range. */
static enum tb_stdin stdin_options(const struct tb_opts *o, int *rows,
                                   int *cols)
{
	static const char *const modes[] = {"null", "pipe", "tty"};
	enum tb_stdin mode = TB_STDIN_NULL;
	int found = !o->stdin_mode;

	for (int i = 0; i < 3 && !found; i++)
		if (strcmp(o->stdin_mode, modes[i]) == 0) {
			mode = (enum tb_stdin)i;
			found = 1;
		}
	if (!found)
		tb_refuse(TB_INVALID, "--stdin: must be null, pipe or tty");
	if (o->rows && mode != TB_STDIN_TTY)
		tb_refuse(TB_INVALID, "--rows: only with --stdin tty");
	if (o->cols && mode != TB_STDIN_TTY)
		tb_refuse(TB_INVALID, "--cols: only with --stdin tty");
	*rows = (int)tb_int_option("--rows", o->rows ? o->rows : "24", 1, 1000);
	*cols = (int)tb_int_option("--cols", o->cols ? o->cols : "80", 1, 1000);
	return mode;
}

int tb_verb_start(const struct tb_opts *o)
{
	char tdir[TB_MAX_PATH + 64], byte = 0;
	struct tb_secrets secrets;
	struct tb_str raw = {0};
	struct tb_job setup = {0};
	struct tb_record rec;
	long long timeout;
	mode_t saved_umask;
	int lock, ready[2];
	pid_t pid;

	timeout = tb_int_option("--timeout", o->timeout, 1, 3600);
	if (!*o->command ||
	    tb_utf8_chars(o->command, strlen(o->command)) > TB_MAX_COMMAND)
		tb_refuse(TB_INVALID, "--command: must be 1 to %d characters",
		          TB_MAX_COMMAND);
	if (o->cwd)
		tb_check_path("--cwd", o->cwd);
	setup.stdin_mode = stdin_options(o, &setup.rows, &setup.cols);
	if (o->key)
		tb_check_key(o->key);
	if (o->request)
		tb_check_request(o->key, o->request);
	tb_secrets_load(&secrets);
	record_init(&rec, o, timeout, &secrets);
	tb_secrets_free(&secrets);
	saved_umask = umask(077);
	lock = tb_root_lock(o->root, 1);
	if (o->key && tb_key_existing(o->root, o->key)) {
		tb_str_free(&rec.command);
		tb_str_free(&shown_cwd);
		return 0;
	}
	snprintf(tdir, sizeof(tdir), "%s/%s", o->root, o->id);
	if (tb_task_names(o->root, NULL, 0) >= TB_MAX_TASKS)
		tb_refuse(
		    TB_LIMIT,
		    "task limit reached: %s holds %d task directories, "
		    "the most allowed; remove finished tasks (verb remove "
		    "--root %s --id ID) and retry",
		    o->root, TB_MAX_TASKS, o->root);
	if (mkdir(tdir, 0700) < 0) {
		if (errno == EEXIST)
			tb_refuse(TB_EXISTS, "--id: task %s already exists",
			          o->id);
		tb_refuse(TB_INTERNAL, "internal error: %s: %s", tdir,
		          strerror(errno));
	}
	if (pipe2(ready, O_CLOEXEC) < 0)
		tb_refuse(TB_INTERNAL, "internal error: pipe: %s",
		          strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		tb_refuse(TB_INTERNAL, "internal error: fork: %s",
		          strerror(errno));
	if (pid == 0) {
		close(lock);
		close(ready[0]);
		setsid();
		setup.ready_fd = ready[1];
		setup.umask = saved_umask;
		setup.command = o->command;
		setup.cwd = o->cwd;
		if (fork() == 0)
			daemon_main(tdir, &rec, &setup);
		tb_str_free(&rec.command);
		_exit(0);
	}
	close(ready[1]);
	tb_str_free(&rec.command);
	tb_str_free(&shown_cwd);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	while (read(ready[0], &byte, 1) < 0 && errno == EINTR)
		;
	close(ready[0]);
	read_raw(tdir, &raw);
	/* Once a record exists, under the lock: two starts with one key
	 * start one task. */
	if (o->key && raw.len &&
	    tb_key_link(o->root, o->key, o->id, o->request) < 0)
		tb_refuse(TB_INTERNAL, "internal error: the link of key %s: %s",
		          o->key, strerror(errno));
	close(lock);
	/* Confirmed by the supervisor, or a terminal record anyway. */
	if (!raw.len || (byte != '1' && strstr(raw.p, "\"running\"")))
		tb_refuse(TB_INTERNAL,
		          "the supervisor of task %s ended before it confirmed "
		          "the start; its state is unknown",
		          o->id);
	print_raw(&raw);
	tb_str_free(&raw);
	return 0;
}
