/* How a command enters its sandbox's cgroup (forkexec.c): made inside it
 * by clone3 with CLONE_INTO_CGROUP, or, where the kernel refuses that, by a
 * fork whose child moves itself there. Either way the command and what it
 * starts report the sandbox's group in /proc/self/cgroup, and a group that
 * vanished makes exec fail with ENOENT. The kernel's refusals are made
 * with a seccomp filter in a child process of the test; the test-only
 * TASKBOX_LOCAL_TEST_SPAWN forces one path ("clone3": no fallback, "fork").
 * Skipped where cgroup v2 is not writable. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper.h"

TestSuite(local_cgspawn, .init = tl_setup, .fini = tl_teardown, .timeout = 120);

/* The command's own group and its child's. */
#define WHERE                                                                  \
	"grep '^0::' /proc/self/cgroup; sh -c \"grep '^0::' "                  \
	"/proc/self/cgroup\""

/* An instance (under bubblewrap when bwrap is set, skipped where it cannot
 * run) with the spawn path forced by how (NULL: the default). */
static void *instance(const char *how, int bwrap)
{
	void *inst = NULL;
	int rc;

	if (how)
		setenv("TASKBOX_LOCAL_TEST_SPAWN", how, 1);
	else
		unsetenv("TASKBOX_LOCAL_TEST_SPAWN");
	if (bwrap && access("/usr/bin/bwrap", X_OK) != 0 &&
	    access("/bin/bwrap", X_OK) != 0)
		cr_skip_test("bubblewrap is not installed");
	rc = tl_init(bwrap ? "{\"root\":\"%s\",\"isolation\":\"bwrap\"}"
	                   : "{\"root\":\"%s\"}",
	             &inst);
	if (bwrap && rc == TASKBOX_E_UNAVAILABLE)
		cr_skip_test("bubblewrap cannot run here: %s", tl_err);
	cr_assert_eq(rc, TASKBOX_OK, "%s", tl_err);
	return inst;
}

/* Makes a sandbox of inst and returns the path of its group (skips the
 * test when it has none). */
static void sandbox(void *inst, char id[TASKBOX_SANDBOX_ID_MAX],
                    char group[512])
{
	char path[512];
	FILE *f;
	size_t n;

	tl_create(inst, 0, id);
	snprintf(path, sizeof path, "%s/.cgroup-%s", tl_root, id);
	if (!(f = fopen(path, "r")))
		cr_skip_test("no writable cgroup v2 here: the sandbox has no "
		             "cgroup");
	n = fread(group, 1, 511, f);
	fclose(f);
	group[n] = '\0';
	cr_assert_gt(n, 0);
}

/* 1 when every line of out (at least two) names the group of id. */
static int all_in_group(const struct taskbox_exec_result *res, const char *id)
{
	char want[64], text[1024];
	int lines = 0;

	if (res->exit_code != 0 || !res->out.len || res->out.len >= sizeof text)
		return 0;
	memcpy(text, res->out.data, res->out.len);
	text[res->out.len] = '\0';
	snprintf(want, sizeof want, "/taskbox-%s", id);
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save), lines++)
		if (strncmp(l, "0::/", 4) || strlen(l) < strlen(want) ||
		    strcmp(l + strlen(l) - strlen(want), want))
			return 0;
	return lines >= 2;
}

/* The errors that say the kernel has no clone3 into a cgroup (valgrind
 * answers ENOSYS too). */
static int clone3_missing(const char *err)
{
	return strstr(err, strerror(ENOSYS)) || strstr(err, strerror(E2BIG)) ||
	       strstr(err, strerror(EINVAL));
}

/* Runs WHERE in a new sandbox of an instance with how and bwrap, and
 * asserts that the command and its child were in the sandbox's group. */
static void lands_in_group(const char *how, int bwrap)
{
	char id[TASKBOX_SANDBOX_ID_MAX], group[512];
	struct taskbox_exec_result res;
	void *inst = instance(how, bwrap), *conn;
	int rc;

	sandbox(inst, id, group);
	conn = tl_connect(inst, id);
	rc = tl_exec(conn, &res, 20000, 0, NULL, NULL, "sh", "-c", WHERE, NULL);
	if (rc != TASKBOX_OK && how && !strcmp(how, "clone3") &&
	    clone3_missing(tl_err))
		cr_skip_test("no clone3 into a cgroup here: %s", tl_err);
	cr_assert_eq(rc, TASKBOX_OK, "exec: %d %s", rc, tl_err);
	cr_assert(all_in_group(&res, id), "not in %s: %.*s%.*s", group,
	          (int)res.out.len, (char *)res.out.data, (int)res.err.len,
	          (char *)res.err.data);
	tl_res_free(&res);
	tl_p->ops.close(conn);
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	tl_p->ops.fini(inst);
}

Test(local_cgspawn, clone3_makes_it_in_the_group)
{
	lands_in_group("clone3", 0);
}

Test(local_cgspawn, clone3_under_bwrap)
{
	lands_in_group("clone3", 1);
}

Test(local_cgspawn, fork_fallback_moves_it_into_the_group)
{
	lands_in_group("fork", 0);
}

Test(local_cgspawn, fork_fallback_under_bwrap)
{
	lands_in_group("fork", 1);
}

Test(local_cgspawn, default_path)
{
	lands_in_group(NULL, 0);
}

/* Makes clone3 fail with err in this process (and its threads). Returns 0,
 * or -1 when seccomp cannot be used. */
static int refuse_clone3(int err)
{
#ifdef __NR_clone3
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	             offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K,
	             SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -1 : 0;
#else
	(void)err;
	return -1;
#endif
}

/* What a child process saw (its exit code). */
enum { SAW_GROUP = 0, SAW_ELSEWHERE = 1, SAW_EXEC_FAILED = 2, NO_SECCOMP = 3 };

/* In a child process whose clone3 fails with err, runs WHERE twice through
 * conn (the second start follows whatever the first decided) and reports
 * what it saw; the parent returns that. */
static int refused_child(void *conn, const char *id, int err)
{
	struct taskbox_exec_result res;
	pid_t pid;
	int ws;

	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int saw = SAW_GROUP;

		if (refuse_clone3(err) != 0)
			_exit(NO_SECCOMP);
		for (int i = 0; i < 2 && saw == SAW_GROUP; i++) {
			if (tl_exec(conn, &res, 20000, 0, NULL, NULL, "sh",
			            "-c", WHERE, NULL) != TASKBOX_OK) {
				fprintf(stderr, "exec: %s\n", tl_err);
				_exit(SAW_EXEC_FAILED);
			}
			if (!all_in_group(&res, id))
				saw = SAW_ELSEWHERE;
			tl_res_free(&res);
		}
		_exit(saw);
	}
	while (waitpid(pid, &ws, 0) < 0)
		cr_assert_eq(errno, EINTR);
	cr_assert(WIFEXITED(ws), "the child died: %#x", ws);
	if (WEXITSTATUS(ws) == NO_SECCOMP)
		cr_skip_test("seccomp filters cannot be set here");
	return WEXITSTATUS(ws);
}

/* The default path where clone3 fails with err: the command still lands
 * in the group (through the fork). */
static void falls_back(int err)
{
	char id[TASKBOX_SANDBOX_ID_MAX], group[512];
	void *inst = instance(NULL, 0), *conn;

	sandbox(inst, id, group);
	conn = tl_connect(inst, id);
	cr_assert_eq(refused_child(conn, id, err), SAW_GROUP,
	             "clone3 refused with %s: not in %s", strerror(err), group);
	tl_p->ops.close(conn);
	tl_p->ops.fini(inst);
}

/* No clone3 at all (old kernels, container runtimes' filters). */
Test(local_cgspawn, falls_back_without_clone3)
{
	falls_back(ENOSYS);
}

/* A clone3 older than its cgroup field (Linux 5.3 to 5.6). */
Test(local_cgspawn, falls_back_on_an_old_clone3)
{
	falls_back(E2BIG);
}

/* A refusal of this group only: the call falls back all the same. */
Test(local_cgspawn, falls_back_when_the_group_is_refused)
{
	falls_back(EOPNOTSUPP);
}

/* The test switch "clone3" has no fallback: refused, exec fails. So the
 * tests above that force it went through clone3. */
Test(local_cgspawn, forced_clone3_does_not_fall_back)
{
	char id[TASKBOX_SANDBOX_ID_MAX], group[512];
	void *inst = instance("clone3", 0), *conn;

	sandbox(inst, id, group);
	conn = tl_connect(inst, id);
	cr_assert_eq(refused_child(conn, id, EOPNOTSUPP), SAW_EXEC_FAILED);
	tl_p->ops.close(conn);
	tl_p->ops.fini(inst);
}

/* A group removed under a connection (the sandbox being destroyed): exec
 * answers ENOENT, by either path. */
static void vanished(const char *how)
{
	char id[TASKBOX_SANDBOX_ID_MAX], group[512];
	struct taskbox_exec_result res;
	void *inst = instance(how, 0), *conn;
	int rc;

	sandbox(inst, id, group);
	conn = tl_connect(inst, id);
	cr_assert_eq(rmdir(group), 0, "rmdir %s: %s", group, strerror(errno));
	rc = tl_exec(conn, &res, 20000, 0, NULL, NULL, "true", NULL);
	cr_assert_eq(rc, TASKBOX_E_NOT_FOUND, "exec: %d %s", rc, tl_err);
	cr_assert(strstr(tl_err, strerror(ENOENT)), "%s", tl_err);
	tl_p->ops.close(conn);
	tl_p->ops.fini(inst);
}

Test(local_cgspawn, vanished_group_is_enoent)
{
	vanished(NULL);
}

Test(local_cgspawn, vanished_group_is_enoent_through_fork)
{
	vanished("fork");
}
