/* destroy (kill_sandbox) and expiry stop every process of a sandbox, also
 * those that dropped the sandbox marker and left the command's session:
 * through the sandbox's cgroup where cgroup v2 is writable, and through
 * the process tree with "cgroup": "off" (the fallback), with isolation
 * "none" and "bwrap". */
#include "config.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper.h"

/* Escapees seen by a test, killed in the fixture if a test fails. */
static long seen[16];
static int n_seen;

static void teardown(void)
{
	for (int i = 0; i < n_seen; i++)
		if (seen[i] > 1 && tl_pid_alive(seen[i]))
			kill((pid_t)seen[i], SIGKILL);
	tl_teardown();
}

TestSuite(local_kill, .init = tl_setup, .fini = teardown, .timeout = 120);

/* Each escape writes its own pid to a file of the home before it sleeps. */
#define ESC_ENV_I                                                              \
	"env -i setsid sh -c 'echo $$ > p1; exec sleep 1000' "                 \
	"</dev/null >/dev/null 2>&1 &"
#define ESC_SETSID_F                                                           \
	"env -i setsid -f nohup sh -c 'echo $$ > p2; exec sleep 1000' "        \
	"</dev/null >/dev/null 2>&1;"
/* Left the home as well: only the cgroup holds it. */
#define ESC_CD_OUT                                                             \
	"h=$PWD; (cd / && env -i setsid -f sh -c 'echo $$ > \"$0\"; exec "     \
	"sleep 1000' \"$h/p3\" </dev/null >/dev/null 2>&1 &);"

/* An instance with extra settings (a JSON fragment after the root), or a
 * skipped test where bubblewrap cannot run. */
static void *instance(const char *extra, int bwrap)
{
	char fmt[256];
	void *inst = NULL;
	int rc;

	if (bwrap && access("/usr/bin/bwrap", X_OK) != 0 &&
	    access("/bin/bwrap", X_OK) != 0)
		cr_skip_test("bubblewrap is not installed");
	snprintf(fmt, sizeof fmt, "{\"root\":\"%%s\"%s%s}", extra,
	         bwrap ? ",\"isolation\":\"bwrap\"" : "");
	rc = tl_init(fmt, &inst);
	if (bwrap && rc == TASKBOX_E_UNAVAILABLE)
		cr_skip_test("bubblewrap cannot run here: %s", tl_err);
	cr_assert_eq(rc, TASKBOX_OK, "%s", tl_err);
	return inst;
}

/* Waits up to 5 s for <root>/<id>/home/name to hold a pid; returns it. */
static long read_pid(const char *id, const char *name)
{
	char path[512];
	long pid = 0;

	snprintf(path, sizeof path, "%s/%s/home/%s", tl_root, id, name);
	for (int i = 0; i < 100 && pid <= 0; i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%ld", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		if (pid <= 0)
			usleep(50000);
	}
	cr_assert_gt(pid, 1, "no pid in %s", path);
	cr_assert_lt(n_seen, 16);
	seen[n_seen++] = pid;
	return pid;
}

/* Nonzero when the sandbox id has a cgroup of its own. */
static int has_cgroup(const char *id)
{
	char path[512];

	snprintf(path, sizeof path, "%s/.cgroup-%s", tl_root, id);
	return tl_exists(path);
}

/* Starts the escapes of script in a sandbox of inst, checks they live
 * after the exec returned, destroys the sandbox and checks they are dead.
 */
static void escapes_die(void *inst, const char *script, const char **files,
                        int want_cgroup)
{
	char id[TASKBOX_SANDBOX_ID_MAX];
	struct taskbox_exec_result res;
	long pids[4];
	int n = 0;
	void *conn;

	tl_create(inst, 0, id);
	if (want_cgroup && !has_cgroup(id))
		cr_skip_test("no writable cgroup v2 here: the sandbox has no "
		             "cgroup");
	if (!want_cgroup)
		cr_assert_not(has_cgroup(id), "cgroup off, but a cgroup made");
	conn = tl_connect(inst, id);
	tl_sh(conn, &res, script);
	cr_assert_eq(res.exit_code, 0, "%.*s", (int)res.err.len,
	             (char *)res.err.data);
	tl_res_free(&res);
	tl_p->ops.close(conn);
	for (; files[n]; n++) {
		pids[n] = read_pid(id, files[n]);
		cr_assert(tl_pid_alive(pids[n]), "%s died early", files[n]);
	}
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	for (int i = 0; i < n; i++)
		cr_assert_not(tl_pid_alive(pids[i]),
		              "%s (pid %ld) survived kill_sandbox", files[i],
		              pids[i]);
}

Test(local_kill, cgroup_stops_what_left_session_and_marker)
{
	const char *files[] = {"p1", "p2", "p3", NULL};
	void *inst = instance("", 0);

	escapes_die(inst, ESC_ENV_I ESC_SETSID_F ESC_CD_OUT, files, 1);
	tl_p->ops.fini(inst);
}

Test(local_kill, cgroup_under_bwrap)
{
	const char *files[] = {"p1", "p2", "p3", NULL};
	void *inst = instance("", 1);

	escapes_die(inst, ESC_ENV_I ESC_SETSID_F ESC_CD_OUT, files, 1);
	tl_p->ops.fini(inst);
}

/* Each command, and what it starts, is in the sandbox's own group. */
Test(local_kill, commands_run_in_the_sandbox_cgroup)
{
	void *inst = instance("", 0), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], want[200];
	struct taskbox_exec_result res;

	tl_create(inst, 0, id);
	if (!has_cgroup(id))
		cr_skip_test("no writable cgroup v2 here");
	conn = tl_connect(inst, id);
	tl_sh(conn, &res, "grep '^0::' /proc/self/cgroup");
	snprintf(want, sizeof want, "/taskbox-%s\n", id);
	cr_assert(res.out.len > strlen(want) &&
	              !memcmp(res.out.data + res.out.len - strlen(want), want,
	                      strlen(want)),
	          "%.*s", (int)res.out.len, (char *)res.out.data);
	tl_res_free(&res);
	tl_p->ops.close(conn);
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_not(has_cgroup(id), "the cgroup's record outlived destroy");
	tl_p->ops.fini(inst);
}

Test(local_kill, process_tree_fallback)
{
	const char *files[] = {"p1", "p2", NULL};
	void *inst = instance(",\"cgroup\":\"off\"", 0);

	escapes_die(inst, ESC_ENV_I ESC_SETSID_F, files, 0);
	tl_p->ops.fini(inst);
}

Test(local_kill, process_tree_fallback_under_bwrap)
{
	const char *files[] = {"p1", "p2", "p3", NULL};
	void *inst = instance(",\"cgroup\":\"off\"", 1);

	/* Under bubblewrap even a process that left the home stays in the
	 * sandbox's mount namespace, and that holds it. */
	escapes_die(inst, ESC_ENV_I ESC_SETSID_F ESC_CD_OUT, files, 0);
	tl_p->ops.fini(inst);
}

/* Expiry (the reaper, with no host running) stops them as well, through
 * the cgroup or (extra: cgroup off) the marker, directory and namespace. */
static void expiry_stops(const char *extra)
{
	void *inst = instance(extra, 0), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], dir[512];
	struct taskbox_exec_result res;
	long p1, p2;

	tl_create(inst, 3, id);
	conn = tl_connect(inst, id);
	tl_sh(conn, &res, ESC_ENV_I ESC_SETSID_F);
	tl_res_free(&res);
	tl_p->ops.close(conn);
	p1 = read_pid(id, "p1");
	p2 = read_pid(id, "p2");
	tl_p->ops.fini(inst);
	snprintf(dir, sizeof dir, "%s/%s", tl_root, id);
	cr_assert(tl_wait_gone(dir, 15000), "the reaper did not remove it");
	for (int i = 0; i < 100 && (tl_pid_alive(p1) || tl_pid_alive(p2)); i++)
		usleep(100000);
	cr_assert_not(tl_pid_alive(p1), "p1 survived expiry");
	cr_assert_not(tl_pid_alive(p2), "p2 survived expiry");
}

Test(local_kill, expiry_stops_escapes)
{
	expiry_stops("");
}

Test(local_kill, expiry_stops_escapes_without_cgroup)
{
	expiry_stops(",\"cgroup\":\"off\"");
}
