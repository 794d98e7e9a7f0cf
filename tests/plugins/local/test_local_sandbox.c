/* The local provider's settings and sandbox lifecycle: create, connect,
 * close, renew, destroy, ids persisting across instances, expiry, the
 * reaper working with no host running, and bubblewrap isolation. */
#include "config.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"

TestSuite(local_sandbox, .init = tl_setup, .fini = tl_teardown, .timeout = 120);

static void expect_invalid(const char *settings, const char *needle)
{
	void *inst = NULL;
	int rc = tl_init(settings, &inst);

	cr_assert_eq(rc, TASKBOX_E_INVALID, "%s gave %d (%s)", settings, rc,
	             tl_err);
	cr_assert_null(inst);
	cr_assert(strstr(tl_err, needle), "message for %s lacks '%s': %s",
	          settings, needle, tl_err);
}

Test(local_sandbox, settings_are_validated)
{
	expect_invalid("{\"root\":\"%s\",\"colour\":1}", "'colour'");
	expect_invalid("[1]", "JSON object");
	expect_invalid("{\"root\": ", "JSON object");
	expect_invalid("{\"root\":\"relative/dir\"}", "'root'");
	expect_invalid("{\"root\":5}", "'root'");
	expect_invalid("{\"root\":\"%s\",\"env\":[]}", "'env'");
	expect_invalid("{\"root\":\"%s\",\"env\":{\"A\":1}}", "'env.A'");
	expect_invalid("{\"root\":\"%s\",\"env\":{\"1A\":\"x\"}}", "'1A'");
	expect_invalid("{\"root\":\"%s\",\"env\":{\"A=B\":\"x\"}}", "'A=B'");
	expect_invalid("{\"root\":\"%s\",\"env\":{\"TASKBOX_SANDBOX_ID\":"
	               "\"x\"}}",
	               "TASKBOX_SANDBOX_ID");
	expect_invalid("{\"root\":\"%s\",\"isolation\":\"docker\"}",
	               "'isolation'");
	expect_invalid("{\"root\":\"%s\",\"default_lifetime\":0}",
	               "'default_lifetime'");
	expect_invalid("{\"root\":\"%s\",\"max_lifetime\":\"1\"}",
	               "'max_lifetime'");
	expect_invalid("{\"root\":\"%s\",\"default_lifetime\":100,"
	               "\"max_lifetime\":10}",
	               "exceeds");
}

Test(local_sandbox, default_root_follows_xdg_state_home)
{
	char xdg[300], want[400];
	void *inst = NULL;

	snprintf(xdg, sizeof xdg, "%s/state", tl_root);
	setenv("XDG_STATE_HOME", xdg, 1);
	cr_assert_eq(
	    tl_p->ops.init(&tl_host, "{}", &inst, tl_err, sizeof tl_err),
	    TASKBOX_OK, "%s", tl_err);
	snprintf(want, sizeof want, "%s/taskbox/local", xdg);
	cr_assert(tl_exists(want), "%s was not made", want);
	tl_p->ops.fini(inst);
}

Test(local_sandbox, create_connect_destroy)
{
	void *inst = tl_init_ok(), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], path[512];

	tl_create(inst, 0, id);
	cr_assert_eq(strlen(id), 32);
	cr_assert_eq(strspn(id, "0123456789abcdef"), 32, "id %s", id);
	snprintf(path, sizeof path, "%s/%s/home", tl_root, id);
	cr_assert(tl_exists(path));
	snprintf(path, sizeof path, "%s/%s/meta.json", tl_root, id);
	cr_assert(tl_exists(path));

	conn = tl_connect(inst, id);
	tl_p->ops.close(conn);
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	snprintf(path, sizeof path, "%s/%s", tl_root, id);
	cr_assert_not(tl_exists(path));
	cr_assert_eq(tl_p->ops.connect(inst, id, &conn, tl_err, sizeof tl_err),
	             TASKBOX_E_NOT_FOUND);
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_E_NOT_FOUND);
	cr_assert_eq(
	    tl_p->ops.connect(inst, "../etc", &conn, tl_err, sizeof tl_err),
	    TASKBOX_E_INVALID);
	cr_assert_eq(tl_p->ops.connect(inst, "0123456789ABCDEF0123456789abcdef",
	                               &conn, tl_err, sizeof tl_err),
	             TASKBOX_E_INVALID);
	cr_assert_eq(tl_p->ops.destroy(inst, "x", tl_err, sizeof tl_err),
	             TASKBOX_E_INVALID);
	tl_p->ops.fini(inst);
}

Test(local_sandbox, templates)
{
	void *inst = tl_init_ok();
	struct taskbox_create_req req = {sizeof req, "base", 0, NULL};
	char id[TASKBOX_SANDBOX_ID_MAX];

	cr_assert_eq(tl_p->ops.create(inst, &req, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	req.template_name = "ubuntu";
	cr_assert_eq(tl_p->ops.create(inst, &req, id, tl_err, sizeof tl_err),
	             TASKBOX_E_NOT_FOUND);
	cr_assert(strstr(tl_err, "base") && strstr(tl_err, "ubuntu"), "%s",
	          tl_err);
	tl_p->ops.fini(inst);
}

Test(local_sandbox, ids_persist_across_instances)
{
	void *a = tl_init_ok(), *b, *conn;
	char id[TASKBOX_SANDBOX_ID_MAX];
	struct taskbox_exec_result res;

	tl_create(a, 0, id);
	conn = tl_connect(a, id);
	tl_sh(conn, &res, "echo kept > note");
	tl_res_free(&res);
	tl_p->ops.close(conn);
	tl_p->ops.fini(a);

	b = tl_init_ok();
	conn = tl_connect(b, id);
	tl_sh(conn, &res, "cat note");
	cr_assert_eq(res.out.len, 5);
	cr_assert_eq(memcmp(res.out.data, "kept\n", 5), 0);
	tl_res_free(&res);
	tl_p->ops.close(conn);
	tl_p->ops.fini(b);
}

/* Moves sandbox id's deadline into the past under its open connection
 * conn, checks that conn's next exec says GONE, and closes conn. */
static void expire_under(void *conn, const char *id)
{
	struct taskbox_exec_result res;

	tl_set_deadline(id, time(NULL) - 1);
	cr_assert_eq(tl_exec(conn, &res, 5000, 100, NULL, NULL, "true", NULL),
	             TASKBOX_E_GONE, "%s", tl_err);
	tl_res_free(&res);
	tl_p->ops.close(conn);
}

Test(local_sandbox, expired_sandbox_is_gone)
{
	void *inst = tl_init_ok(), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], id2[TASKBOX_SANDBOX_ID_MAX], dir[512];

	tl_create(inst, 0, id);
	tl_set_deadline(id, time(NULL) - 1);
	cr_assert_eq(tl_p->ops.connect(inst, id, &conn, tl_err, sizeof tl_err),
	             TASKBOX_E_GONE);
	cr_assert(strstr(tl_err, "expired"), "%s", tl_err);
	snprintf(dir, sizeof dir, "%s/%s", tl_root, id);
	cr_assert_not(tl_exists(dir));

	/* An open connection sees the expiry at its next op. */
	tl_create(inst, 0, id2);
	expire_under(tl_connect(inst, id2), id2);
	tl_p->ops.fini(inst);
}

/* read_file keeps the deadline connect read (no system call per read),
 * and still says GONE for a sandbox destroyed under it or once that
 * deadline has passed. */
Test(local_sandbox, reads_keep_the_deadline_connect_read)
{
	void *inst = tl_init_ok(), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX];
	struct taskbox_exec_result res;
	struct taskbox_buf data;
	uint64_t size;
	time_t deadline;

	tl_create(inst, 0, id);
	conn = tl_connect(inst, id);
	tl_sh(conn, &res, "echo one > note");
	tl_res_free(&res);
	/* Moved on disk under the open connection: reads go on. */
	tl_set_deadline(id, time(NULL) - 1);
	cr_assert_eq(tl_p->ops.read_file(conn, "note", 0, 10, &data, &size,
	                                 tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_eq(data.len, 4);
	tl_host.free(data.data);
	/* Destroyed under it: the next read says so. */
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_eq(tl_p->ops.read_file(conn, "note", 0, 10, &data, &size,
	                                 tl_err, sizeof tl_err),
	             TASKBOX_E_GONE, "%s", tl_err);
	cr_assert(strstr(tl_err, "destroyed"), "%s", tl_err);
	tl_p->ops.close(conn);

	/* The deadline connect read passes: the next read says expired (the
	 * reaper sleeps past it: tl_create waited for that). */
	tl_create(inst, 0, id);
	deadline = time(NULL) + 2;
	tl_set_deadline(id, deadline);
	conn = tl_connect(inst, id);
	while (time(NULL) < deadline)
		usleep(50000);
	cr_assert_eq(tl_p->ops.read_file(conn, "note", 0, 10, &data, &size,
	                                 tl_err, sizeof tl_err),
	             TASKBOX_E_GONE, "%s", tl_err);
	cr_assert(strstr(tl_err, "expired"), "%s", tl_err);
	tl_p->ops.close(conn);
	tl_p->ops.fini(inst);
}

/* close keeps a connection idle for the next connect (idle.c): it must
 * never answer for a sandbox destroyed, expired or renewed since, and
 * fini must let go of every descriptor it kept. */
Test(local_sandbox, idle_connections_never_outlive_their_sandbox)
{
	int fds = tl_open_fds();
	void *inst = tl_init_ok(), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], ids[20][TASKBOX_SANDBOX_ID_MAX];
	struct taskbox_exec_result res;
	struct taskbox_buf data;
	uint64_t size;

	/* Reused: the second connect works like the first. */
	tl_create(inst, 0, id);
	conn = tl_connect(inst, id);
	tl_sh(conn, &res, "echo one > note");
	tl_res_free(&res);
	tl_p->ops.close(conn);
	conn = tl_connect(inst, id);
	cr_assert_eq(tl_p->ops.read_file(conn, "note", 0, 10, &data, &size,
	                                 tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_eq(data.len, 4);
	tl_host.free(data.data);
	tl_p->ops.close(conn);

	/* Destroyed while idle: connect says so. */
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_eq(tl_p->ops.connect(inst, id, &conn, tl_err, sizeof tl_err),
	             TASKBOX_E_NOT_FOUND);

	/* Expired while idle: connect removes it and says so. */
	tl_create(inst, 0, id);
	tl_p->ops.close(tl_connect(inst, id));
	tl_set_deadline(id, time(NULL) - 1);
	cr_assert_eq(tl_p->ops.connect(inst, id, &conn, tl_err, sizeof tl_err),
	             TASKBOX_E_GONE);
	cr_assert(strstr(tl_err, "expired"), "%s", tl_err);

	/* Renewed elsewhere while idle: the new deadline holds. */
	tl_create(inst, 0, id);
	tl_p->ops.close(tl_connect(inst, id));
	tl_set_deadline(id, time(NULL) + 1);
	expire_under(tl_connect(inst, id), id);

	/* More sandboxes than idle slots: the oldest are let go. */
	for (int i = 0; i < 20; i++) {
		tl_create(inst, 0, ids[i]);
		tl_p->ops.close(tl_connect(inst, ids[i]));
	}
	for (int i = 0; i < 20; i++)
		tl_p->ops.close(tl_connect(inst, ids[i]));
	tl_p->ops.fini(inst);
	cr_assert_eq(tl_open_fds(), fds, "fini closed every idle connection");
}

/* Reads created and deadline from the sandbox's meta.json. */
static void read_meta(const char *id, long long *created, long long *deadline)
{
	char path[512], meta[256];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s/meta.json", tl_root, id);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(meta, sizeof meta, f));
	fclose(f);
	cr_assert_eq(sscanf(meta,
	                    "{\"format\":1,\"created\":%lld,"
	                    "\"deadline\":%lld",
	                    created, deadline),
	             2, "%s", meta);
}

/* Renews by ask and checks the deadline moved to now + want. */
static void renew_to(void *conn, const char *id, uint32_t ask, long long want)
{
	long long created, deadline;
	time_t before = time(NULL);

	cr_assert_eq(tl_p->ops.renew(conn, ask, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	read_meta(id, &created, &deadline);
	cr_assert(deadline >= before + want && deadline <= time(NULL) + want,
	          "renew(%u): deadline %lld, wanted now + %lld", ask, deadline,
	          want);
}

Test(local_sandbox, renew_moves_the_deadline_within_max)
{
	void *inst = NULL, *conn;
	char id[TASKBOX_SANDBOX_ID_MAX];
	long long created, deadline;

	cr_assert_eq(tl_init("{\"root\":\"%s\",\"default_lifetime\":60,"
	                     "\"max_lifetime\":200}",
	                     &inst),
	             TASKBOX_OK, "%s", tl_err);
	tl_create(inst, 5000, id);
	read_meta(id, &created, &deadline);
	cr_assert_eq(deadline - created, 200, "create is bounded by max");
	conn = tl_connect(inst, id);
	renew_to(conn, id, 100, 100);
	renew_to(conn, id, 100000, 200);
	renew_to(conn, id, 0, 60);
	tl_p->ops.close(conn);
	tl_p->ops.fini(inst);
}

Test(local_sandbox, destroy_stops_setsid_background_processes)
{
	void *inst = tl_init_ok(), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX];
	struct taskbox_exec_result res;
	long pid = 0;

	tl_create(inst, 0, id);
	conn = tl_connect(inst, id);
	tl_sh(conn, &res,
	      "setsid sh -c 'trap \"\" TERM; sleep 1000' </dev/null "
	      ">/dev/null 2>&1 & echo $!");
	pid = tl_out_long(&res);
	tl_res_free(&res);
	tl_p->ops.close(conn);
	usleep(100000);
	cr_assert(tl_pid_alive(pid));
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_not(tl_pid_alive(pid), "process %ld survived destroy", pid);
	tl_p->ops.fini(inst);
}

Test(local_sandbox, reaper_removes_expired_sandbox_without_host)
{
	void *inst = tl_init_ok(), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], dir[512];
	struct taskbox_exec_result res;
	long pid;

	tl_create(inst, 0, id);
	conn = tl_connect(inst, id);
	tl_sh(conn, &res,
	      "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!");
	pid = tl_out_long(&res);
	tl_res_free(&res);
	/* Shortening the lifetime reaches the sleeping reaper. */
	cr_assert_eq(tl_p->ops.renew(conn, 2, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	tl_p->ops.close(conn);
	tl_p->ops.fini(inst); /* no host from here on */
	snprintf(dir, sizeof dir, "%s/%s", tl_root, id);
	cr_assert(tl_exists(dir));
	cr_assert(tl_wait_gone(dir, 25000), "the reaper left %s", dir);
	for (int i = 0; i < 100 && tl_pid_alive(pid); i++)
		usleep(50000);
	cr_assert_not(tl_pid_alive(pid), "process %ld survived", pid);
}

Test(local_sandbox, init_sweeps_expired_sandboxes)
{
	void *inst = tl_init_ok();
	char id[TASKBOX_SANDBOX_ID_MAX], dir[512], gone[512];

	tl_create(inst, 0, id);
	tl_p->ops.fini(inst);
	tl_set_deadline(id, time(NULL) - 5);
	/* A removal that was interrupted half way. */
	snprintf(gone, sizeof gone, "%s/.gone-%s-0011223344556677", tl_root,
	         "0123456789abcdef0123456789abcdef");
	cr_assert_eq(mkdir(gone, 0700), 0);
	inst = tl_init_ok();
	snprintf(dir, sizeof dir, "%s/%s", tl_root, id);
	cr_assert_not(tl_exists(dir));
	cr_assert_not(tl_exists(gone));
	tl_p->ops.fini(inst);
}

Test(local_sandbox, bwrap_isolation)
{
	void *inst = tl_bwrap_init_ok(), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], path[512];
	struct taskbox_exec_result res;
	struct taskbox_buf data;
	uint64_t size;
	tl_create(inst, 0, id);
	conn = tl_connect(inst, id);
	/* Outside the sandbox and outside /tmp (which is the sandbox's). */
	snprintf(path, sizeof path, "/var/tmp/tb-local-escape-%ld",
	         (long)getpid());
	char script[700];
	snprintf(script, sizeof script,
	         "echo in > inside && echo t > /tmp/t && "
	         "if touch %s 2>/dev/null; then echo escaped; fi; "
	         "echo $TASKBOX_SANDBOX_ID",
	         path);
	tl_sh(conn, &res, script);
	cr_assert_eq(res.exit_code, 0, "%.*s", (int)res.err.len,
	             (char *)res.err.data);
	cr_assert_eq(res.out.len, 33, "%.*s", (int)res.out.len,
	             (char *)res.out.data);
	cr_assert_eq(memcmp(res.out.data, id, 32), 0);
	tl_res_free(&res);
	cr_assert_not(tl_exists(path), "wrote outside the sandbox");
	cr_assert_eq(tl_p->ops.read_file(conn, "/tmp/t", 0, 10, &data, &size,
	                                 tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_eq(data.len, 2);
	free(data.data);
	cr_assert_eq(tl_p->ops.write_file(conn, "../escape",
	                                  (const unsigned char *)"x", 1, 0644,
	                                  tl_err, sizeof tl_err),
	             TASKBOX_E_PERMISSION);
	cr_assert_eq(tl_p->ops.write_file(conn, path,
	                                  (const unsigned char *)"x", 1, 0644,
	                                  tl_err, sizeof tl_err),
	             TASKBOX_E_PERMISSION);
	cr_assert_not(tl_exists(path));
	cr_assert_eq(tl_p->ops.write_file(conn, "/tmp/w",
	                                  (const unsigned char *)"x", 1, 0644,
	                                  tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	tl_sh(conn, &res, "cat /tmp/w");
	cr_assert_eq(res.out.len, 1);
	tl_res_free(&res);

	/* A daemon (a task's supervisor) outlives the exec that started it,
	 * its pid means the same outside, and destroy stops it. */
	tl_sh(conn, &res,
	      "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!");
	long pid = tl_out_long(&res);
	tl_res_free(&res);
	usleep(200000);
	cr_assert(tl_pid_alive(pid), "the daemon died with its exec");
	tl_p->ops.close(conn);
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_not(tl_pid_alive(pid), "process %ld survived destroy", pid);
	tl_p->ops.fini(inst);

	setenv("PATH", "/nonexistent", 1);
	cr_assert_eq(
	    tl_init("{\"root\":\"%s\",\"isolation\":\"bwrap\"}", &inst),
	    TASKBOX_E_UNAVAILABLE);
	cr_assert(strstr(tl_err, "bwrap"), "%s", tl_err);
}

/* Two instances on one root: a sandbox made by one isolation is refused to
 * an instance of the other (connect and destroy), and reached as before by
 * an instance of its own. */
Test(local_sandbox, isolation_is_per_sandbox_not_per_root)
{
	char id[TASKBOX_SANDBOX_ID_MAX], other[TASKBOX_SANDBOX_ID_MAX];
	void *safe = NULL, *plain = NULL, *c = NULL;

	if (access("/usr/bin/bwrap", X_OK) != 0 && access("/bin/bwrap", X_OK))
		cr_skip_test("bwrap is not installed");
	cr_assert_eq(
	    tl_init("{\"root\":\"%s\",\"isolation\":\"bwrap\"}", &safe),
	    TASKBOX_OK, "%s", tl_err);
	plain = tl_init_ok();
	tl_create(safe, 0, id);
	cr_assert_eq(tl_p->ops.connect(plain, id, &c, tl_err, sizeof(tl_err)),
	             TASKBOX_E_PERMISSION);
	cr_assert(strstr(tl_err, "made with isolation \"bwrap\""), "%s",
	          tl_err);
	cr_assert_eq(tl_p->ops.destroy(plain, id, tl_err, sizeof(tl_err)),
	             TASKBOX_E_PERMISSION);
	/* The other way round too, and renew keeps the record. */
	tl_create(plain, 0, other);
	cr_assert_eq(tl_p->ops.connect(safe, other, &c, tl_err, sizeof(tl_err)),
	             TASKBOX_E_PERMISSION);
	c = tl_connect(safe, id);
	cr_assert_eq(tl_p->ops.renew(c, 600, tl_err, sizeof(tl_err)),
	             TASKBOX_OK, "%s", tl_err);
	tl_p->ops.close(c);
	cr_assert_eq(tl_p->ops.connect(plain, id, &c, tl_err, sizeof(tl_err)),
	             TASKBOX_E_PERMISSION);
	cr_assert_eq(tl_p->ops.destroy(safe, id, tl_err, sizeof(tl_err)),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_eq(tl_p->ops.destroy(plain, other, tl_err, sizeof(tl_err)),
	             TASKBOX_OK, "%s", tl_err);
	tl_p->ops.fini(safe);
	tl_p->ops.fini(plain);
}

/* Under bubblewrap the sandbox's own commands cannot widen it: they hold
 * no capability; a tmp/ or home/ they replaced with a link to a host
 * directory is refused rather than bound or written through; and
 * read_file's /tmp is the sandbox's however the path spells it. */
Test(local_sandbox, bwrap_holds_against_the_sandbox_own_commands)
{
	void *inst = tl_bwrap_init_ok(), *again = NULL, *conn, *c2 = NULL;
	char id[TASKBOX_SANDBOX_ID_MAX], victim[300], script[600], rel[700];
	struct taskbox_exec_result res;
	struct taskbox_buf data;
	uint64_t size;
	const char *spellings[] = {"//tmp/tb-spelled", "/./tmp/tb-spelled",
	                           "/tmp//./tb-spelled"};

	/* Outside the sandbox, inside this test's root (removed after it). */
	snprintf(victim, sizeof victim, "%s/host-dir", tl_root);
	cr_assert_eq(mkdir(victim, 0755), 0);
	tl_create(inst, 0, id);
	conn = tl_connect(inst, id);

	tl_sh(conn, &res, "grep '^CapEff' /proc/self/status");
	cr_assert(res.out.len >= 24 &&
	              strstr((char *)res.out.data, "0000000000000000"),
	          "%.*s", (int)res.out.len, (char *)res.out.data);
	tl_res_free(&res);

	/* /tmp as read_file sees it, however spelled. */
	tl_sh(conn, &res, "printf inside > /tmp/tb-spelled");
	tl_res_free(&res);
	for (size_t i = 0; i < sizeof spellings / sizeof *spellings; i++) {
		cr_assert_eq(tl_p->ops.read_file(conn, spellings[i], 0, 100,
		                                 &data, &size, tl_err,
		                                 sizeof tl_err),
		             TASKBOX_OK, "%s: %s", spellings[i], tl_err);
		cr_assert_eq(data.len, 6, "%s", spellings[i]);
		cr_assert(!memcmp(data.data, "inside", 6));
		free(data.data);
	}

	/* tmp/ replaced with a link to a host directory, as a command of the
	 * sandbox can (done from here: this test's root is under /tmp, where
	 * bubblewrap's own mounts would be in the way). */
	snprintf(script, sizeof script, "%s/%s/tmp", tl_root, id);
	snprintf(rel, sizeof rel, "%s/%s/tmp.old", tl_root, id);
	cr_assert_eq(rename(script, rel), 0);
	cr_assert_eq(symlink(victim, script), 0);
	cr_assert_eq(tl_exec(conn, &res, 20000, 0, NULL, NULL, "sh", "-c",
	                     "touch /tmp/planted", NULL),
	             TASKBOX_E_PERMISSION, "%s", tl_err);
	cr_assert(strstr(tl_err, "tmp/"), "%s", tl_err);
	snprintf(rel, sizeof rel, "%s/planted", victim);
	cr_assert_not(tl_exists(rel), "a command wrote in the host directory");

	/* home/ replaced with a link: a fresh instance refuses the sandbox
	 * instead of writing through the link. */
	snprintf(script, sizeof script, "%s/%s/home", tl_root, id);
	snprintf(rel, sizeof rel, "%s/%s/home.old", tl_root, id);
	cr_assert_eq(rename(script, rel), 0);
	cr_assert_eq(symlink(victim, script), 0);
	tl_p->ops.close(conn);
	cr_assert_eq(
	    tl_init("{\"root\":\"%s\",\"isolation\":\"bwrap\"}", &again),
	    TASKBOX_OK, "%s", tl_err);
	if (tl_p->ops.connect(again, id, &c2, tl_err, sizeof tl_err) ==
	    TASKBOX_OK) {
		cr_assert_neq(tl_p->ops.write_file(
		                  c2, "planted", (const unsigned char *)"x", 1,
		                  0644, tl_err, sizeof tl_err),
		              TASKBOX_OK);
		tl_p->ops.close(c2);
	}
	snprintf(rel, sizeof rel, "%s/planted", victim);
	cr_assert_not(tl_exists(rel), "write_file wrote through home/");
	cr_assert_eq(tl_p->ops.destroy(again, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	tl_p->ops.fini(again);
	tl_p->ops.fini(inst);
}
