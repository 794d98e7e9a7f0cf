/* Starting the command: /bin/sh -c -- TEXT as the leader of its own group
 * (with --stdin tty, of its own session on the terminal), its descriptors,
 * and the report of a failure before the exec. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sup.h"

/* The child's side of spawn(): never returns. Failures before the exec go
 * to REPORT (close-on-exec) as a message. */
static _Noreturn void exec_command(const struct tb_job *job,
                                   const struct tb_child_fds *fds, int report)
{
	static const int sigs[] = {SIGPIPE, SIGXFSZ, SIGHUP,
	                           SIGINT,  SIGTERM, SIGCHLD};
	char msg[512];
	sigset_t none;
	int n;

	/* A session of its own is a group of its own too: the pgid is
	 * still the shell's pid. */
	if (fds->tty) {
		if (setsid() < 0 || ioctl(fds->in, TIOCSCTTY, 0) < 0) {
			n = snprintf(msg, sizeof(msg), "terminal: %s",
			             strerror(errno));
			goto fail;
		}
	} else {
		setpgid(0, 0);
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	umask(job->umask);
	if ((fds->in >= 0 && dup2(fds->in, 0) < 0) || dup2(fds->out, 1) < 0 ||
	    dup2(fds->err, 2) < 0) {
		n = snprintf(msg, sizeof(msg), "dup2: %s", strerror(errno));
		goto fail;
	}
	/* The message shows the record's cwd, secrets masked. */
	if (job->cwd && chdir(job->cwd) < 0) {
		n = snprintf(msg, sizeof(msg), "cwd '%.400s': %s",
		             job->rec->cwd ? job->rec->cwd : "",
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

int tb_spawn(const struct tb_job *job, const struct tb_child_fds *fds,
             char *err, size_t errlen)
{
	struct tb_record *rec = job->rec;
	char msg[512];
	struct tb_proc proc;
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
		exec_command(job, fds, report[1]);
	}
	close(report[1]);
	/* Wins the race with the child's own call; not for a terminal's
	 * session leader, whose setsid() a group of its own would refuse. */
	if (!fds->tty)
		setpgid(pid, pid);
	rec->pgid = pid;
	rec->pgid_start = tb_proc_stat(pid, &proc) == 0 ? proc.start : TB_NULL;
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
