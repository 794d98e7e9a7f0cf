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

/* The command's exit code once it has exited (128+N for signal N, also
 * left in JOB's sig), else -1. The rest of its group is killed before the
 * leader is reaped, so the group id cannot have been reused, and is gone (or
 * TB_KILL_SETTLE_MS has passed) when this returns. */
static int reap(struct tb_job *job)
{
	const struct tb_record *rec = job->rec;
	siginfo_t info;
	int status;

	memset(&info, 0, sizeof(info));
	if (waitid(P_PID, (id_t)rec->pgid, &info, WEXITED | WNOHANG | WNOWAIT) <
	        0 ||
	    info.si_pid == 0)
		return -1;
	tb_run_kill_group(rec);
	while (waitpid((pid_t)rec->pgid, &status, 0) < 0)
		if (errno != EINTR)
			return 128 + SIGKILL;
	tb_group_await_gone(rec->pgid, TB_KILL_SETTLE_MS, job->dfd);
	if (WIFSIGNALED(status)) {
		job->sig = WTERMSIG(status);
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

/* How a task ended: docs/supervisor.md's ended_by for the reason. */
const char *tb_ended_by(const char *reason)
{
	if (reason && strcmp(reason, "cancelled") == 0)
		return "cancel";
	if (reason && strcmp(reason, "timed_out") == 0)
		return "timeout";
	return "exit";
}

/* Drains what is left and publishes the terminal record (then the logs,
 * the record and the directory are fsynced: tb_record_publish). */
static int finish(struct tb_job *job, struct tb_stream *st, long long code,
                  char *err, size_t errlen)
{
	static char signame[32];
	struct tb_record *rec = job->rec;
	int logs[2] = {st[0].log, st[1].log};

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
	rec->stdout_bytes = st[0].kept;
	rec->stderr_bytes = st[1].kept;
	rec->stdout_truncated = st[0].truncated;
	rec->stderr_truncated = st[1].truncated;
	if (job->reason)
		rec->state = job->reason;
	else
		rec->state = code == 0 ? "succeeded" : "failed";
	rec->finished_at = (long long)time(NULL);
	rec->exit_code = code;
	rec->signal = NULL;
	if (job->sig)
		rec->signal =
		    tb_signal_name(job->sig, signame, sizeof(signame));
	rec->ended_by = tb_ended_by(job->reason);
	tb_stream_free(&st[0]);
	tb_stream_free(&st[1]);
	if (tb_record_publish(job->dfd, rec, logs, 2) < 0)
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

/* The command's descriptors and the supervisor's ends: the output pipes
 * (with --stdin tty, the terminal: its master is the stdout stream), and
 * with --stdin pipe or tty the FIFOs and the relay's target. Returns 0, or
 * -1 with a message in ERR. */
static int open_io(struct tb_job *job, struct tb_stream *st,
                   struct tb_child_fds *fds, struct tb_relay *relay, char *err,
                   size_t errlen)
{
	int out[2] = {-1, -1}, errp[2] = {-1, -1}, in[2] = {-1, -1};
	int fifo = -1, control = -1, target = -1, master, tty;

	tty = job->stdin_mode == TB_STDIN_TTY;
	*fds =
	    (struct tb_child_fds){.in = -1, .out = -1, .err = -1, .tty = tty};
	if (job->stdin_mode != TB_STDIN_NULL &&
	    tb_relay_fifos(job->dfd, &fifo, &control) < 0) {
		snprintf(err, errlen, "the stdin FIFOs: %s", strerror(errno));
		return -1;
	}
	if (tty) {
		if (tb_pty_open(job->rows, job->cols, &master, &fds->in) < 0 ||
		    (target = fcntl(master, F_DUPFD_CLOEXEC, 0)) < 0) {
			snprintf(err, errlen, "the terminal: %s",
			         strerror(errno));
			return -1;
		}
		fds->out = fds->err = fds->in;
		tb_stream_init(&st[0], master, job->log_out, job->secrets);
		tb_stream_init(&st[1], -1, job->log_err, job->secrets);
	} else {
		if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 ||
		    (job->stdin_mode == TB_STDIN_PIPE &&
		     pipe2(in, O_CLOEXEC) < 0)) {
			snprintf(err, errlen, "pipe: %s", strerror(errno));
			return -1;
		}
		fcntl(out[0], F_SETFL, O_NONBLOCK);
		fcntl(errp[0], F_SETFL, O_NONBLOCK);
		if (in[1] >= 0)
			fcntl(in[1], F_SETFL, O_NONBLOCK);
		fds->in = in[0];
		fds->out = out[1];
		fds->err = errp[1];
		target = in[1];
		tb_stream_init(&st[0], out[0], job->log_out, job->secrets);
		tb_stream_init(&st[1], errp[0], job->log_err, job->secrets);
	}
	tb_relay_init(relay, fifo, control, target, tty);
	return 0;
}

/* Closes the command's ends of its descriptors in the supervisor. */
static void close_child_fds(const struct tb_child_fds *fds)
{
	if (fds->in >= 0)
		close(fds->in);
	if (fds->out >= 0 && fds->out != fds->in)
		close(fds->out);
	if (fds->err >= 0 && fds->err != fds->in)
		close(fds->err);
}

/* The relay of --stdin pipe or tty: one per supervisor, too big for the
 * stack. */
static struct tb_relay relay;

int tb_run(struct tb_job *job, char *err, size_t errlen)
{
	struct tb_record *rec = job->rec;
	struct tb_stream st[2];
	struct tb_child_fds fds;
	struct pollfd pfd[6];
	long long deadline, kill_at = -1, drain_until = -1, code = -1, now;
	long long beat_at;
	int wake_r, child_changed = 1;
	char why[TB_MSG_MAX];

	if (setup_signals(&wake_r) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if (open_io(job, st, &fds, &relay, err, errlen) < 0)
		return -1;
	if (tb_spawn(job, &fds, why, sizeof(why)) < 0) {
		close_child_fds(&fds);
		tb_relay_stop(&relay);
		rec->started_at = (long long)time(NULL);
		rec->error = strdup(why);
		if (!rec->error)
			tb_oom();
		return finish(job, st, TB_NULL, err, errlen);
	}
	close_child_fds(&fds);
	rec->started_at = (long long)time(NULL);
	deadline = tb_mono_ms() + job->timeout * 1000;
	tb_heartbeat_write(job->dfd);
	beat_at = tb_mono_ms() + TB_HEARTBEAT_MS;
	if (tb_record_write(job->dfd, rec) < 0) {
		snprintf(err, errlen, "writing the record: %s",
		         strerror(errno));
		return -1;
	}
	tb_signal_ready(&job->ready_fd);

	pfd[0] = (struct pollfd){.fd = wake_r, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = st[0].fd, .events = POLLIN};
	pfd[2] = (struct pollfd){.fd = st[1].fd, .events = POLLIN};
	for (;;) {
		long long due = -1;
		int wait_ms;

		now = tb_mono_ms();
		if (now >= beat_at) {
			tb_heartbeat_write(job->dfd);
			beat_at = now + TB_HEARTBEAT_MS;
		}
		if (code < 0 && child_changed) {
			child_changed = 0;
			code = reap(job);
			if (code >= 0) {
				/* counted from now: reap may have waited */
				drain_until = tb_mono_ms() + TB_DRAIN_GRACE_MS;
				tb_relay_stop(&relay);
			}
		}
		if (code < 0) {
			if (cancel_flag && !job->reason) {
				job->reason = "cancelled";
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
			if (!job->reason && now >= deadline) {
				job->reason = "timed_out";
				kill(-(pid_t)rec->pgid, SIGTERM);
				kill_at = now + TB_TERM_GRACE_MS;
			}
			if (kill_at >= 0 && now >= kill_at) {
				tb_run_kill_group(rec);
				kill_at = -1;
			}
			if (!job->reason)
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
		tb_relay_events(&relay, &pfd[3]);
		if (poll(pfd, 6, wait_ms) < 0) {
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
			if (!st[i].open && job->stdin_mode == TB_STDIN_TTY)
				tb_relay_stop(
				    &relay); /* the terminal is gone */
			/* Output being discarded: let it gather in the 1 MiB
			 * pipe rather than wake per write. */
			if (st[i].open && got < TB_BATCH_BYTES && st[i].big &&
			    code < 0)
				pause_briefly();
		}
		if ((pfd[3].revents && tb_relay_control(&relay) < 0) ||
		    ((pfd[3].revents || pfd[4].revents || pfd[5].revents) &&
		     tb_relay_pump(&relay) < 0)) {
			snprintf(err, errlen, "relaying stdin: %s",
			         strerror(errno));
			return -1;
		}
	}
	return finish(job, st, code, err, errlen);
}
