/* Starting a command inside its sandbox's cgroup: fork, move the child
 * into the group (it writes "0" to the group's cgroup.procs), then set it
 * up as exec's posix_spawn does and execve. Between fork and execve the
 * child only makes async-signal-safe calls: the host is threaded. So the
 * command, and everything it ever starts, is in the group from its first
 * instruction; no window lets a child of it start elsewhere.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "local_int.h"

/* Reports err on the status pipe and ends the child. */
_Noreturn static void child_fail(int pipe_w, int err)
{
	ssize_t n = write(pipe_w, &err, sizeof err);

	(void)n;
	_exit(127);
}

/* The child's side: never returns. */
_Noreturn static void child(const struct tb_local_spawn *sp, int pipe_w)
{
	struct sigaction dfl;
	sigset_t none;
	unsigned high = (unsigned)sp->nfds, w = (unsigned)pipe_w;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &dfl, NULL);
	if (write(sp->procs_fd, "0", 1) != 1)
		child_fail(pipe_w, errno);
	if (setpgid(0, 0) != 0)
		child_fail(pipe_w, errno);
	/* The targets are 0..nfds-1 in order; every source is either above
	 * them all or already placed (see struct tb_local_spawn). */
	for (int i = 0; i < sp->nfds; i++)
		if (dup2(sp->fds[i], i) < 0)
			child_fail(pipe_w, errno);
	if (sp->cwd && chdir(sp->cwd) != 0)
		child_fail(pipe_w, errno);
	/* Everything above the mapped descriptors but the status pipe, which
	 * closes on exec. */
	if (w < high ? close_range(high, ~0u, 0) != 0
	             : (w > high && close_range(high, w - 1, 0) != 0) ||
	                   close_range(w + 1, ~0u, 0) != 0)
		for (unsigned fd = high; fd < 1024; fd++)
			if (fd != w)
				close((int)fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(sp->argv[0], sp->argv, sp->envp);
	child_fail(pipe_w, errno);
}

int tb_local_fork_exec(const struct tb_local_spawn *sp, pid_t *pid)
{
	sigset_t all, old;
	int st[2], err = 0;
	ssize_t n;

	if (pipe2(st, O_CLOEXEC) != 0)
		return errno;
	/* The status pipe's write end must not be one of the targets. */
	if (st[1] < sp->nfds) {
		int moved = fcntl(st[1], F_DUPFD_CLOEXEC, sp->nfds);
		close(st[1]);
		if (moved < 0) {
			err = errno;
			close(st[0]);
			return err;
		}
		st[1] = moved;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	*pid = fork();
	if (*pid == 0)
		child(sp, st[1]);
	if (*pid < 0)
		err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(st[1]);
	if (err) {
		close(st[0]);
		return err;
	}
	do
		n = read(st[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(st[0]);
	if (n == (ssize_t)sizeof err) {
		/* It failed before execve: reap it, report why. */
		int ws;
		while (waitpid(*pid, &ws, 0) < 0 && errno == EINTR)
			;
		return err ? err : EIO;
	}
	return 0;
}
