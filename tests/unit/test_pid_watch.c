/* Supervisors watched through pidfds: a watch answers alive until its
 * process exits, ends then, is keyed by pid and start time, and the least
 * recently checked one makes room. The table's rules are checked with pipe
 * descriptors (a pipe whose writer closed polls readable, as a pidfd does
 * once its process exits), so they run under valgrind too, which has no
 * pidfd_open. */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "open_fds.h"
#include "tasks/pid_watch.h"

/* A pipe's read end for a watch; its write end in *writer. */
static int pipe_watch_fd(int *writer)
{
	int p[2];

	cr_assert_eq(pipe(p), 0);
	*writer = p[1];
	return p[0];
}

static void fini(void)
{
	tb_pid_watch_clear();
}

TestSuite(pid_watch, .fini = fini);

Test(pid_watch, a_watch_says_alive_until_its_process_exits)
{
	siginfo_t si;
	pid_t pid;
	int fd;

	if ((fd = tb_pid_watch_open(getpid())) < 0 && errno == ENOSYS)
		cr_skip_test("no pidfd_open here (an old kernel, valgrind)");
	cr_assert_geq(fd, 0);
	close(fd);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	cr_assert_eq(tb_pid_watch_check(pid, 77), -1, "not watched yet");
	fd = tb_pid_watch_open(pid);
	cr_assert_geq(fd, 0);
	tb_pid_watch_keep(pid, 77, fd);
	cr_assert_eq(tb_pid_watch_check(pid, 77), 1);
	cr_assert_eq(tb_pid_watch_check(pid, 78), -1,
	             "another start time is another process");
	cr_assert_eq(kill(pid, SIGKILL), 0);
	/* Wait for the exit without reaping: a zombie has exited too. */
	cr_assert_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	cr_assert_eq(tb_pid_watch_check(pid, 77), 0, "the exit is seen");
	cr_assert_eq(tb_pid_watch_check(pid, 77), -1, "and the watch ended");
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	cr_assert_eq(tb_pid_watch_open(pid), -1, "no pidfd once reaped");
	cr_assert_eq(errno, ESRCH);
}

Test(pid_watch, a_watch_ends_when_its_descriptor_polls_readable)
{
	int w, fd = pipe_watch_fd(&w);

	tb_pid_watch_keep(42, 7, fd);
	cr_assert_eq(tb_pid_watch_check(42, 7), 1);
	cr_assert_eq(tb_pid_watch_check(43, 7), -1, "another pid");
	close(w);
	cr_assert_eq(tb_pid_watch_check(42, 7), 0);
	cr_assert_eq(tb_pid_watch_check(42, 7), -1);
}

Test(pid_watch, the_least_recently_checked_watch_makes_room)
{
	int writers[TB_PID_WATCH_MAX + 1];

	for (uint64_t s = 0; s <= TB_PID_WATCH_MAX; s++) {
		int fd = pipe_watch_fd(&writers[s]);
		if (s == TB_PID_WATCH_MAX)
			cr_assert_eq(tb_pid_watch_check(42, 0), 1);
		tb_pid_watch_keep(42, s, fd);
	}
	cr_assert_eq(tb_pid_watch_check(42, 1), -1, "the oldest went");
	cr_assert_eq(tb_pid_watch_check(42, 0), 1, "the one checked stayed");
	cr_assert_eq(tb_pid_watch_check(42, TB_PID_WATCH_MAX), 1);
	cr_assert_eq(tb_pid_watch_check(42, 2), 1);
	tb_pid_watch_clear();
	for (unsigned i = 0; i <= TB_PID_WATCH_MAX; i++)
		close(writers[i]);
}

Test(pid_watch, no_descriptor_is_left_behind)
{
	int before = open_fds(), w1, w2;

	tb_pid_watch_keep(42, 1, pipe_watch_fd(&w1));
	tb_pid_watch_keep(42, 1, pipe_watch_fd(&w2));
	close(w1);
	close(w2);
	cr_assert_eq(open_fds(), before + 1,
	             "a second watch of one key "
	             "closes its descriptor");
	tb_pid_watch_keep(42, 2, -1);
	cr_assert_eq(tb_pid_watch_check(42, 2), -1, "-1 is no watch");
	tb_pid_watch_clear();
	cr_assert_eq(open_fds(), before);
	cr_assert_eq(tb_pid_watch_check(42, 1), -1);
}

Test(pid_watch, no_pidfd_for_an_impossible_pid)
{
	cr_assert_eq(tb_pid_watch_open(0), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tb_pid_watch_open(-1), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(tb_pid_watch_open((int64_t)INT_MAX + 1), -1);
	cr_assert_eq(errno, EINVAL);
}
