/* Starting a command inside its sandbox's cgroup. The child is made in the
 * group by clone3 with CLONE_INTO_CGROUP (Linux 5.7): no migration, which
 * would wait for an RCU grace period. Where the kernel (or a seccomp
 * filter) lacks it, and for a call whose group it refuses, it forks
 * instead and the child moves itself into the group (it writes "0" to the
 * group's cgroup.procs). Either way the child then sets itself up as
 * exec's posix_spawn does and execs. Between clone3 or fork and execve the
 * child only makes async-signal-safe calls: the host is threaded. So the
 * command, and everything it ever starts, is in the group from its first
 * instruction; no window lets a child of it start elsewhere.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "local_int.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* struct clone_args as of Linux 5.7 (CLONE_ARGS_SIZE_VER2, 88 bytes): a
 * kernel ABI, spelt out because older <linux/sched.h> lack the cgroup. */
struct tb_clone_args {
	uint64_t flags;
	uint64_t pidfd;
	uint64_t child_tid;
	uint64_t parent_tid;
	uint64_t exit_signal;
	uint64_t stack;
	uint64_t stack_size;
	uint64_t tls;
	uint64_t set_tid;
	uint64_t set_tid_size;
	uint64_t cgroup;
};

/* Set once clone3 into a group failed in a way that says this kernel does
 * not have it (no clone3, or one older than the cgroup field): every later
 * start of the process forks. Read and set atomically. */
static int clone3_missing;

/* Reports err on the status pipe and ends the child. */
_Noreturn static void child_fail(int pipe_w, int err)
{
	ssize_t n = write(pipe_w, &err, sizeof err);

	(void)n;
	_exit(127);
}

/* The child's side: joins the group through procs_fd unless it is -1 (made
 * in it), then never returns. */
_Noreturn static void child(const struct tb_local_spawn *sp, int pipe_w,
                            int procs_fd)
{
	struct sigaction dfl;
	sigset_t none;
	unsigned high = (unsigned)sp->nfds, w = (unsigned)pipe_w;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &dfl, NULL);
	if (procs_fd >= 0 && write(procs_fd, "0", 1) != 1)
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

/* Makes the child inside the group with clone3 (like fork: no CLONE_VM, so
 * the child goes on with a copy of this stack; SIGCHLD when it ends).
 * Returns 0 with *pid, or clone3's errno value. */
static int clone_into(const struct tb_local_spawn *sp, int pipe_w, pid_t *pid)
{
#ifdef SYS_clone3
	struct tb_clone_args ca;
	sigset_t all, old;
	long r;
	int err = 0;

	memset(&ca, 0, sizeof ca);
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)sp->group_fd;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = syscall(SYS_clone3, &ca, sizeof ca);
	if (r == 0)
		child(sp, pipe_w, -1);
	if (r < 0)
		err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		*pid = (pid_t)r;
	return err;
#else
	(void)sp;
	(void)pipe_w;
	(void)pid;
	return ENOSYS;
#endif
}

/* The fallback: forks, and the child writes itself into the group's
 * cgroup.procs. Returns 0 with *pid, or an errno value (ENOENT when the
 * group is gone). */
static int fork_then_join(const struct tb_local_spawn *sp, int pipe_w,
                          pid_t *pid)
{
	sigset_t all, old;
	int procs, err = 0;

	procs = openat(sp->group_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (procs < 0)
		return errno;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	*pid = fork();
	if (*pid == 0)
		child(sp, pipe_w, procs);
	if (*pid < 0)
		err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(procs);
	return err;
}

/* Starts the child in the group by clone3 where it can, else by the
 * fallback (sp->how forces one of them). Returns 0 with *pid or an errno
 * value. */
static int start(const struct tb_local_spawn *sp, int pipe_w, pid_t *pid)
{
	int err;

	if (sp->how == TB_LOCAL_SPAWN_FORK ||
	    (sp->how == TB_LOCAL_SPAWN_AUTO &&
	     __atomic_load_n(&clone3_missing, __ATOMIC_RELAXED)))
		return fork_then_join(sp, pipe_w, pid);
	err = clone_into(sp, pipe_w, pid);
	/* No process could be made at all (limits, memory, or the group's
	 * pids.max): a fork would only escape the group's limit. */
	if (!err || sp->how == TB_LOCAL_SPAWN_CLONE3 || err == EAGAIN ||
	    err == ENOMEM)
		return err;
	/* The kernel's answer to the call itself: no clone3 (or a filter
	 * that hides it), or one without CLONE_INTO_CGROUP. Anything else
	 * concerns this group (EOPNOTSUPP, EBUSY, ENODEV, EACCES...): fall
	 * back for this call only. */
	if (err == ENOSYS || err == E2BIG || err == EINVAL)
		__atomic_store_n(&clone3_missing, 1, __ATOMIC_RELAXED);
	return fork_then_join(sp, pipe_w, pid);
}

int tb_local_fork_exec(const struct tb_local_spawn *sp, pid_t *pid)
{
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
	err = start(sp, st[1], pid);
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
