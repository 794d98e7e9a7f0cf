/* exec on the local provider: output, exit codes, signals, cwd, the
 * environment, timeouts, cancellation, output limits and concurrency. */
#include "config.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper.h"

static void *inst, *conn;
static char id[TASKBOX_SANDBOX_ID_MAX];

static void setup(void)
{
	tl_setup();
	cr_assert_eq(tl_init("{\"root\":\"%s\",\"env\":{\"TB_SET\":\"from-"
	                     "settings\",\"TB_BOTH\":\"settings\"}}",
	                     &inst),
	             TASKBOX_OK, "%s", tl_err);
	tl_create(inst, 0, id);
	conn = tl_connect(inst, id);
}

static void teardown(void)
{
	tl_p->ops.close(conn);
	tl_p->ops.fini(inst);
	tl_teardown();
}

TestSuite(local_exec, .init = setup, .fini = teardown, .timeout = 120);

#define OUT_IS(res, text)                                                      \
	cr_assert((res).out.len == strlen(text) &&                             \
	              !memcmp((res).out.data, text, strlen(text)),             \
	          "stdout is '%.*s', wanted '%s'", (int)(res).out.len,         \
	          (char *)(res).out.data, text)

Test(local_exec, output_and_exit_code)
{
	struct taskbox_exec_result res;

	tl_sh(conn, &res, "echo out; echo err >&2; exit 3");
	OUT_IS(res, "out\n");
	cr_assert_eq(res.err.len, 4);
	cr_assert_eq(memcmp(res.err.data, "err\n", 4), 0);
	cr_assert_eq(res.exit_code, 3);
	cr_assert_not(res.timed_out || res.out_truncated || res.err_truncated);
	tl_res_free(&res);

	tl_sh(conn, &res, "true");
	cr_assert_null(res.out.data);
	cr_assert_eq(res.exit_code, 0);
	tl_res_free(&res);
}

Test(local_exec, signals_give_128_plus_n)
{
	struct taskbox_exec_result res;

	tl_sh(conn, &res, "kill -9 $$");
	cr_assert_eq(res.exit_code, 137);
	tl_res_free(&res);
	tl_sh(conn, &res, "kill -TERM $$");
	cr_assert_eq(res.exit_code, 143);
	tl_res_free(&res);
}

Test(local_exec, cwd_defaults_to_home_and_resolves_against_it)
{
	struct taskbox_exec_result res;
	char want[600];

	snprintf(want, sizeof want, "%s/%s/home\n", tl_root, id);
	tl_sh(conn, &res, "pwd; mkdir -p sub/dir");
	OUT_IS(res, want);
	tl_res_free(&res);
	cr_assert_eq(tl_exec(conn, &res, 5000, 0, NULL, "sub/dir", "pwd", NULL),
	             TASKBOX_OK, "%s", tl_err);
	snprintf(want, sizeof want, "%s/%s/home/sub/dir\n", tl_root, id);
	OUT_IS(res, want);
	tl_res_free(&res);
	cr_assert_eq(tl_exec(conn, &res, 5000, 0, NULL, "/", "pwd", NULL),
	             TASKBOX_OK, "%s", tl_err);
	OUT_IS(res, "/\n");
	tl_res_free(&res);
	cr_assert_eq(tl_exec(conn, &res, 5000, 0, NULL, "missing", "pwd", NULL),
	             TASKBOX_E_NOT_FOUND);
	cr_assert(strstr(tl_err, "missing"), "%s", tl_err);
}

Test(local_exec, environment_layers)
{
	struct taskbox_exec_result res;
	const char *env[] = {"TB_REQ=from-request", "TB_BOTH=request", NULL};
	char want[300];

	setenv("TB_SERVER", "from-server", 1);
	cr_assert_eq(tl_exec(conn, &res, 5000, 0, env, NULL, "sh", "-c",
	                     "echo $TB_SERVER $TB_SET $TB_REQ $TB_BOTH "
	                     "$TASKBOX_SANDBOX_ID",
	                     NULL),
	             TASKBOX_OK, "%s", tl_err);
	snprintf(want, sizeof want,
	         "from-server from-settings from-request request %s\n", id);
	OUT_IS(res, want);
	tl_res_free(&res);

	/* argv[0] is looked up in the command's PATH. */
	const char *path_env[] = {"PATH=/nonexistent", NULL};
	cr_assert_eq(tl_exec(conn, &res, 5000, 0, path_env, NULL, "sh", "-c",
	                     "true", NULL),
	             TASKBOX_E_NOT_FOUND);
	cr_assert_eq(tl_exec(conn, &res, 5000, 0, NULL, NULL,
	                     "no-such-command-here", NULL),
	             TASKBOX_E_NOT_FOUND);
	const char *bad_env[] = {"NOEQUALS", NULL};
	cr_assert_eq(tl_exec(conn, &res, 5000, 0, bad_env, NULL, "true", NULL),
	             TASKBOX_E_INVALID);
	cr_assert_eq(tl_exec(conn, &res, 0, 0, NULL, NULL, "true", NULL),
	             TASKBOX_E_INVALID);
	cr_assert(strstr(tl_err, "timeout_ms"), "%s", tl_err);
}

Test(local_exec, timeout_terms_then_kills_the_group)
{
	struct taskbox_exec_result res;
	int64_t t0 = tl_now_ms();

	cr_assert_eq(tl_exec(conn, &res, 300, 0, NULL, NULL, "sh", "-c",
	                     "echo started; sleep 30", NULL),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert(res.timed_out);
	cr_assert_eq(res.exit_code, 143);
	OUT_IS(res, "started\n");
	cr_assert_lt(tl_now_ms() - t0, 10000);
	tl_res_free(&res);

	/* A command that ignores TERM is killed. */
	cr_assert_eq(tl_exec(conn, &res, 300, 0, NULL, NULL, "sh", "-c",
	                     "trap '' TERM; sleep 30; echo survived", NULL),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert(res.timed_out);
	cr_assert_eq(res.exit_code, 137);
	cr_assert_eq(res.out.len, 0);
	tl_res_free(&res);
}

/* Cancels once the command has written its pid file. */
static int cancel_when_started(void *arg)
{
	struct stat st;

	return stat(arg, &st) == 0 && st.st_size > 0;
}

Test(local_exec, cancelled_kills_the_group)
{
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	const char *argv[] = {"sh", "-c", "echo $$ > pid; sleep 30", NULL};
	char pidfile[600];

	snprintf(pidfile, sizeof pidfile, "%s/%s/home/pid", tl_root, id);
	struct taskbox_exec_req req = {
	    .struct_size = sizeof req,
	    .argv = argv,
	    .timeout_ms = 60000,
	    .cancelled = cancel_when_started,
	    .cancelled_arg = pidfile,
	};
	int64_t t0;
	struct taskbox_buf data;
	uint64_t size;
	long pid;

	t0 = tl_now_ms();
	cr_assert_eq(tl_p->ops.exec(conn, &req, &res, tl_err, sizeof tl_err),
	             TASKBOX_E_CANCELLED, "%s", tl_err);
	cr_assert_lt(tl_now_ms() - t0, 5000);
	cr_assert_null(res.out.data);
	cr_assert_eq(tl_p->ops.read_file(conn, "pid", 0, 100, &data, &size,
	                                 tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	char num[32] = "";
	memcpy(num, data.data, data.len < 31 ? data.len : 31);
	cr_assert_eq(sscanf(num, "%ld", &pid), 1, "%s", num);
	free(data.data);
	cr_assert_not(tl_pid_alive(pid));
}

Test(local_exec, output_limit_and_ten_mebibytes)
{
	struct taskbox_exec_result res;
	const char *script = "head -c 10485760 /dev/zero; "
	                     "head -c 10485760 /dev/zero >&2; echo done >&2";

	cr_assert_eq(tl_exec(conn, &res, 60000, 1000, NULL, NULL, "sh", "-c",
	                     script, NULL),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_eq(res.out.len, 1000);
	cr_assert_eq(res.err.len, 1000);
	cr_assert(res.out_truncated && res.err_truncated);
	cr_assert_eq(res.exit_code, 0);
	tl_res_free(&res);

	cr_assert_eq(
	    tl_exec(conn, &res, 60000, 0, NULL, NULL, "sh", "-c", script, NULL),
	    TASKBOX_OK, "%s", tl_err);
	cr_assert_eq(res.out.len, 10485760);
	cr_assert_eq(res.err.len, 10485765);
	cr_assert_not(res.out_truncated || res.err_truncated);
	cr_assert_eq(memcmp(res.err.data + 10485760, "done\n", 5), 0);
	tl_res_free(&res);
}

Test(local_exec, background_holder_does_not_block)
{
	struct taskbox_exec_result res;
	int64_t t0 = tl_now_ms();

	tl_sh(conn, &res, "sleep 60 & echo hi");
	OUT_IS(res, "hi\n");
	cr_assert_lt(tl_now_ms() - t0, 30000);
	tl_res_free(&res);
}

static void *run_in_own_sandbox(void *arg)
{
	char sid[TASKBOX_SANDBOX_ID_MAX], err[TASKBOX_ERRBUF_SIZE];
	struct taskbox_create_req creq = {sizeof creq, NULL, 0, NULL};
	const char *argv[] = {"sh", "-c", "echo $TASKBOX_SANDBOX_ID", NULL};
	struct taskbox_exec_req req = {
	    .struct_size = sizeof req, .argv = argv, .timeout_ms = 20000};
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	void *c = NULL;
	intptr_t ok = 0;

	(void)arg;
	if (tl_p->ops.create(inst, &creq, sid, err, sizeof err) ||
	    tl_p->ops.connect(inst, sid, &c, err, sizeof err))
		return (void *)ok;
	for (int i = 0; i < 5; i++) {
		ok = !tl_p->ops.exec(c, &req, &res, err, sizeof err) &&
		     res.out.len == 33 && !memcmp(res.out.data, sid, 32);
		free(res.out.data);
		free(res.err.data);
		memset(&res, 0, sizeof res);
		res.struct_size = sizeof res;
		if (!ok)
			break;
	}
	tl_p->ops.close(c);
	tl_p->ops.destroy(inst, sid, err, sizeof err);
	return (void *)ok;
}

Test(local_exec, concurrent_connections)
{
	pthread_t t[4];
	void *ok;

	for (int i = 0; i < 4; i++)
		cr_assert_eq(
		    pthread_create(&t[i], NULL, run_in_own_sandbox, NULL), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &ok);
		cr_assert(ok, "thread %d failed", i);
	}
}
