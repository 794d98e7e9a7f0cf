/* The running supervisor: starts /bin/sh -c COMMAND in its own process
 * group, drains its output, enforces the timeout, acts on a cancel, cleans
 * up the group and writes the records (docs/supervisor.md, Rules). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sup.h"

static volatile sig_atomic_t cancel_flag;
static int wake_w = -1;

static void on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGTERM)
		cancel_flag = 1;
	if (write(wake_w, "", 1) < 0) {
		/* full: a wake-up is pending anyway */
	}
	errno = saved;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tb_signal_ready(int *ready_fd)
{
	if (*ready_fd < 0)
		return;
	if (write(*ready_fd, "1", 1) < 0) {
		/* the launcher is gone: nobody waits for the byte */
	}
	close(*ready_fd);
	*ready_fd = -1;
}

void tb_run_kill_group(const struct tb_record *rec)
{
	if (rec->pgid != TB_NULL && rec->pgid > 0)
		kill(-(pid_t)rec->pgid, SIGKILL);
}

/* The child's side of spawn(): never returns. Failures before the exec go
 * to REPORT (close-on-exec) as a message. */
static _Noreturn void exec_command(const struct tb_job *job, int out_w,
                                   int err_w, int report)
{
	static const int sigs[] = {SIGPIPE, SIGXFSZ, SIGHUP,
	                           SIGINT,  SIGTERM, SIGCHLD};
	char msg[512];
	sigset_t none;
	int n;

	setpgid(0, 0);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	umask(job->umask);
	if (dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) {
		n = snprintf(msg, sizeof(msg), "dup2: %s", strerror(errno));
		goto fail;
	}
	if (job->cwd && chdir(job->cwd) < 0) {
		n = snprintf(msg, sizeof(msg), "cwd '%.400s': %s", job->cwd,
		             strerror(errno));
		goto fail;
	}
	/* "--": a command that begins with - or + is still the command. */
	execl("/bin/sh", "sh", "-c", "--", job->command, (char *)NULL);
	n = snprintf(msg, sizeof(msg), "/bin/sh: %s", strerror(errno));
fail:
	if (n > 0 && write(report, msg, (size_t)n) < 0)
		_exit(127);
	_exit(127);
}

/* Forks the command as the leader of its own group. Returns 0, or -1 with
 * the reason it could not be started in ERR (the record then has the pid
 * if a process was created). */
static int spawn(const struct tb_job *job, int out_w, int err_w, char *err,
                 size_t errlen)
{
	struct tb_record *rec = job->rec;
	char msg[512], state;
	long long start;
	size_t len = 0;
	int report[2];
	ssize_t n;
	pid_t pid;

	if (pipe2(report, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot start the command: pipe: %s",
		         strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the command: fork: %s",
		         strerror(errno));
		close(report[0]);
		close(report[1]);
		return -1;
	}
	if (pid == 0) {
		close(report[0]);
		exec_command(job, out_w, err_w, report[1]);
	}
	close(report[1]);
	setpgid(pid, pid);
	rec->pgid = pid;
	rec->pgid_start =
	    tb_proc_stat(pid, &state, &start) == 0 ? start : TB_NULL;
	while (len < sizeof(msg) - 1 &&
	       (n = read(report[0], msg + len, sizeof(msg) - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	close(report[0]);
	if (!len)
		return 0;
	msg[len] = '\0';
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	for (size_t i = 0; i < len; i++)
		if (msg[i] == '\n' || msg[i] == '\t' || msg[i] == '\r')
			msg[i] = ' ';
	snprintf(err, errlen, "cannot start the command: %s", msg);
	return -1;
}

/* The scheduler slice asked for by hurry(): the shortest Linux grants. */
#define TB_FINISH_SLICE_NS 100000u

/* Once the command has exited: asks the scheduler to give the CPU back to
 * this process soon after each wake-up (a short EEVDF slice, Linux 6.12
 * and later, allowed unprivileged at the same nice), as the rest is a few
 * short steps between fsyncs that would each wait for a busy CPU anew and
 * a waiting host sees the end only after them. A no-op elsewhere. */
static void hurry(void)
{
#ifdef SYS_sched_setattr
	struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t priority;
		uint64_t runtime, deadline, period;
	} attr;

	memset(&attr, 0, sizeof(attr));
	if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) < 0 ||
	    attr.policy != 0 /* SCHED_OTHER */)
		return;
	attr.size = sizeof(attr);
	attr.flags = 0;
	attr.runtime = TB_FINISH_SLICE_NS;
	if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0) {
		/* an older kernel: the default slice */
	}
#endif
}

/* The command's exit code once it has exited (128+N for signal N), else
 * -1. The rest of its group is killed before the leader is reaped, so the
 * group id cannot have been reused. */
static int reap(const struct tb_record *rec)
{
	siginfo_t info;
	int status;

	memset(&info, 0, sizeof(info));
	if (waitid(P_PID, (id_t)rec->pgid, &info, WEXITED | WNOHANG | WNOWAIT) <
	        0 ||
	    info.si_pid == 0)
		return -1;
	tb_run_kill_group(rec);
	hurry();
	while (waitpid((pid_t)rec->pgid, &status, 0) < 0)
		if (errno != EINTR)
			return 128 + SIGKILL;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Drains what is left, fsyncs the logs and writes the terminal record. */
static int finish(struct tb_job *job, struct tb_stream *st, long long code,
                  const char *reason, char *err, size_t errlen)
{
	struct tb_record *rec = job->rec;

	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < 64 && st[i].open; j++) {
			ssize_t n = tb_stream_read(&st[i]);

			if (n < 0)
				goto io;
			if (n == 0)
				break;
		}
		if (tb_stream_close(&st[i]) < 0)
			goto io;
	}
	if (fsync(st[0].log) < 0 || fsync(st[1].log) < 0)
		goto io;
	rec->stdout_bytes = st[0].kept;
	rec->stderr_bytes = st[1].kept;
	rec->stdout_truncated = st[0].truncated;
	rec->stderr_truncated = st[1].truncated;
	rec->state = reason ? reason : code == 0 ? "succeeded" : "failed";
	rec->finished_at = (long long)time(NULL);
	rec->exit_code = code;
	tb_stream_free(&st[0]);
	tb_stream_free(&st[1]);
	if (tb_record_write(job->dfd, rec) < 0)
		goto io;
	tb_signal_ready(&job->ready_fd);
	return 0;
io:
	snprintf(err, errlen, "writing the logs or the record: %s",
	         strerror(errno));
	return -1;
}

/* Sets up the self-pipe and the handlers for SIGTERM and SIGCHLD. */
static int setup_signals(int *wake_r)
{
	struct sigaction sa;
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	*wake_r = p[0];
	wake_w = p[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) < 0 ||
	    sigaction(SIGCHLD, &sa, NULL) < 0)
		return -1;
	return 0;
}

static void pause_briefly(void)
{
	struct timespec ts = {0, TB_BATCH_PAUSE_NS};

	nanosleep(&ts, NULL);
}

int tb_run(struct tb_job *job, char *err, size_t errlen)
{
	struct tb_record *rec = job->rec;
	struct tb_stream st[2];
	struct pollfd pfd[3];
	long long deadline, kill_at = -1, drain_until = -1, code = -1, now;
	long long beat_at;
	const char *reason = NULL;
	int out[2], errp[2], wake_r, child_changed = 1;
	char why[TB_MSG_MAX];

	if (setup_signals(&wake_r) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(errp, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(errp[0], F_SETFL, O_NONBLOCK);
	tb_stream_init(&st[0], out[0], job->log_out, job->secrets);
	tb_stream_init(&st[1], errp[0], job->log_err, job->secrets);
	if (spawn(job, out[1], errp[1], why, sizeof(why)) < 0) {
		close(out[1]);
		close(errp[1]);
		rec->started_at = (long long)time(NULL);
		rec->error = strdup(why);
		if (!rec->error)
			tb_oom();
		return finish(job, st, TB_NULL, "failed", err, errlen);
	}
	close(out[1]);
	close(errp[1]);
	rec->started_at = (long long)time(NULL);
	deadline = now_ms() + job->timeout * 1000;
	tb_heartbeat_write(job->dfd);
	beat_at = now_ms() + TB_HEARTBEAT_MS;
	if (tb_record_write(job->dfd, rec) < 0) {
		snprintf(err, errlen, "writing the record: %s",
		         strerror(errno));
		return -1;
	}
	tb_signal_ready(&job->ready_fd);

	pfd[0] = (struct pollfd){.fd = wake_r, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = out[0], .events = POLLIN};
	pfd[2] = (struct pollfd){.fd = errp[0], .events = POLLIN};
	for (;;) {
		long long due = -1;
		int wait_ms;

		now = now_ms();
		if (now >= beat_at) {
			tb_heartbeat_write(job->dfd);
			beat_at = now + TB_HEARTBEAT_MS;
		}
		if (code < 0 && child_changed) {
			child_changed = 0;
			code = reap(rec);
			if (code >= 0)
				drain_until = now + TB_DRAIN_GRACE_MS;
		}
		if (code < 0) {
			if (cancel_flag && !reason) {
				reason = "cancelled";
				rec->cancel_requested = 1;
				kill(-(pid_t)rec->pgid, SIGTERM);
				kill_at = now + TB_TERM_GRACE_MS;
				if (tb_record_write(job->dfd, rec) < 0) {
					snprintf(err, errlen,
					         "writing the record: %s",
					         strerror(errno));
					return -1;
				}
			}
			if (!reason && now >= deadline) {
				reason = "timed_out";
				kill(-(pid_t)rec->pgid, SIGTERM);
				kill_at = now + TB_TERM_GRACE_MS;
			}
			if (kill_at >= 0 && now >= kill_at) {
				tb_run_kill_group(rec);
				kill_at = -1;
			}
			if (!reason)
				due = deadline;
			if (kill_at >= 0 && (due < 0 || kill_at < due))
				due = kill_at;
		} else {
			if ((!st[0].open && !st[1].open) || now >= drain_until)
				break;
			due = drain_until;
		}
		/* A quiet task still gets its beat on time. */
		if (due < 0 || beat_at < due)
			due = beat_at;
		wait_ms = (int)(due - now > 0 ? due - now : 0) + 1;
		pfd[1].fd = st[0].open ? st[0].fd : -1;
		pfd[2].fd = st[1].open ? st[1].fd : -1;
		if (poll(pfd, 3, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return -1;
		}
		if (pfd[0].revents) {
			char sink[64];

			while (read(wake_r, sink, sizeof(sink)) > 0)
				;
			child_changed = 1; /* drained before reap: no loss */
		}
		for (int i = 0; i < 2; i++) {
			ssize_t got;

			if (!st[i].open || !pfd[i + 1].revents)
				continue;
			got = tb_stream_read(&st[i]);
			if (got < 0) {
				snprintf(err, errlen, "writing the log: %s",
				         strerror(errno));
				return -1;
			}
			/* Output being discarded: let it gather in the 1 MiB
			 * pipe rather than wake per write. */
			if (st[i].open && got < TB_BATCH_BYTES && st[i].big &&
			    code < 0)
				pause_briefly();
		}
	}
	return finish(job, st, code, reason, err, errlen);
}
