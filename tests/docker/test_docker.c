/* The docker provider against a real engine (tests/docker/docker.sh starts
 * it): every op, output limits, timeouts, offsets, errors, lifetimes, an
 * engine restart, tcp and TLS, owners (describe and list). Environment:
 * TASKBOX_DOCKER_PLUGIN (the built .so), DOCKER_HOST, TASKBOX_DOCKER_IMAGE,
 * TASKBOX_DOCKER_ENGINE (engine.sh), TASKBOX_DOCKER_ENGINE_DIR,
 * TASKBOX_DOCKER_TCP, TASKBOX_DOCKER_TLS and TASKBOX_DOCKER_TLS_DIR (engine.sh
 * proxy), and TASKBOX_DOCKER_NOINIT_HOST (a second engine without an init
 * binary). Some tests watch the plugin's requests through socat (-v) between it
 * and the engine. */
#include "config.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "taskbox/provider.h"

static const struct taskbox_provider *P;
static void *inst;
static char err[TASKBOX_ERRBUF_SIZE];

/* How many log lines said the engine has no init binary. */
static int no_init_lines;

static void host_log(enum taskbox_log_level level, const char *provider,
                     const char *message)
{
	fprintf(stderr, "[%d] %s: %s\n", (int)level, provider, message);
	if (strstr(message, "has no init binary"))
		no_init_lines++;
}

static const struct taskbox_host host = {
    .abi_major = TASKBOX_ABI_MAJOR,
    .abi_minor = TASKBOX_ABI_MINOR,
    .struct_size = sizeof(struct taskbox_host),
    .alloc = malloc,
    .realloc = realloc,
    .free = free,
    .log = host_log,
};

static const char *env_or_die(const char *name)
{
	const char *v = getenv(name);

	cr_assert(v && *v, "%s is not set: run through tests/docker/docker.sh",
	          name);
	return v;
}

static void load(void)
{
	void *so = dlopen(env_or_die("TASKBOX_DOCKER_PLUGIN"), RTLD_NOW);
	taskbox_provider_entry_fn entry;

	cr_assert(so, "dlopen: %s", dlerror());
	*(void **)&entry = dlsym(so, TASKBOX_PROVIDER_ENTRY_NAME);
	cr_assert(entry);
	P = entry();
	cr_assert_str_eq(P->name, "docker");
}

/* Settings for the test engine plus extra JSON members (may be ""). */
static int init_with(void **out, const char *extra)
{
	char s[2048];

	snprintf(s, sizeof(s), "{\"host\":\"%s\",\"image\":\"%s\"%s%s}",
	         env_or_die("DOCKER_HOST"), env_or_die("TASKBOX_DOCKER_IMAGE"),
	         *extra ? "," : "", extra);
	return P->ops.init(&host, s, out, err, sizeof(err));
}

/* Like init_with, on the engine that has no init binary. */
static int init_noinit(void **out, const char *extra)
{
	char s[2048];

	snprintf(s, sizeof(s), "{\"host\":\"%s\",\"image\":\"%s\"%s%s}",
	         env_or_die("TASKBOX_DOCKER_NOINIT_HOST"),
	         env_or_die("TASKBOX_DOCKER_IMAGE"), *extra ? "," : "", extra);
	return P->ops.init(&host, s, out, err, sizeof(err));
}

static void setup(void)
{
	load();
	cr_assert_eq(init_with(&inst, ""), TASKBOX_OK, "init: %s", err);
}

/* A socat a test started (see spy_start), ended even when it fails. */
static pid_t spy_pid;

static void teardown(void)
{
	if (spy_pid > 0) {
		kill(-spy_pid, SIGTERM);
		waitpid(spy_pid, NULL, 0);
		spy_pid = 0;
	}
	if (inst)
		P->ops.fini(inst);
	inst = NULL;
}

static void make_box(void *in, char *id, uint32_t lifetime)
{
	struct taskbox_create_req req = {sizeof(req), NULL, lifetime, NULL};

	cr_assert_eq(P->ops.create(in, &req, id, err, sizeof(err)), TASKBOX_OK,
	             "create: %s", err);
	cr_assert_eq(strlen(id), 64);
}

static void *attach(void *in, const char *id)
{
	void *c = NULL;

	cr_assert_eq(P->ops.connect(in, id, &c, err, sizeof(err)), TASKBOX_OK,
	             "connect: %s", err);
	return c;
}

/* Runs sh -c script; returns the status and fills res. */
static int run(void *c, const char *script, uint32_t timeout_ms, size_t limit,
               struct taskbox_exec_result *res)
{
	const char *argv[] = {"sh", "-c", script, NULL};
	struct taskbox_exec_req req = {sizeof(req), argv,  NULL, NULL,
	                               timeout_ms,  limit, NULL, NULL,
	                               0,           NULL,  0};

	memset(res, 0, sizeof(*res));
	res->struct_size = sizeof(*res);
	return P->ops.exec(c, &req, res, err, sizeof(err));
}

static void res_free(struct taskbox_exec_result *res)
{
	free(res->out.data);
	free(res->err.data);
}

/* Runs script and asserts it succeeded with exactly this stdout. */
static void expect_out(void *c, const char *script, const char *out)
{
	struct taskbox_exec_result res;

	cr_assert_eq(run(c, script, 20000, 0, &res), TASKBOX_OK, "exec: %s",
	             err);
	cr_assert_eq(res.exit_code, 0, "%s: exit %d, stderr %.*s", script,
	             res.exit_code, (int)res.err.len,
	             res.err.data ? (char *)res.err.data : "");
	cr_assert_eq(res.out.len, strlen(out), "%s: got %.*s", script,
	             (int)res.out.len,
	             res.out.data ? (char *)res.out.data : "");
	cr_assert(!res.out.len || !memcmp(res.out.data, out, res.out.len));
	res_free(&res);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void engine(const char *verb)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "'%s' %s '%s'",
	         env_or_die("TASKBOX_DOCKER_ENGINE"), verb,
	         env_or_die("TASKBOX_DOCKER_ENGINE_DIR"));
	cr_assert_eq(system(cmd), 0, "engine.sh %s failed", verb);
}

TestSuite(docker, .init = setup, .fini = teardown, .timeout = 120);

Test(docker, settings_are_checked)
{
	void *x = NULL;

	cr_assert_eq(init_with(&x, "\"colour\":1"), TASKBOX_E_INVALID);
	cr_assert(strstr(err, "colour"), "%s", err);
	cr_assert_eq(init_with(&x, "\"cpus\":-1"), TASKBOX_E_INVALID);
	cr_assert(strstr(err, "cpus"), "%s", err);
	cr_assert_eq(init_with(&x, "\"workdir\":\"rel\""), TASKBOX_E_INVALID);
	cr_assert_eq(init_with(&x, "\"env\":{\"1A\":\"v\"}"),
	             TASKBOX_E_INVALID);
	cr_assert(strstr(err, "env"), "%s", err);
	cr_assert_eq(init_with(&x, "\"templates\":{\"a\":3}"),
	             TASKBOX_E_INVALID);
	cr_assert_eq(P->ops.init(&host,
	                         "{\"host\":\"ftp://x\",\"image\":\"i\"}", &x,
	                         err, sizeof(err)),
	             TASKBOX_E_INVALID);
	cr_assert(strstr(err, "host"), "%s", err);
	cr_assert_eq(P->ops.init(&host, "{}", &x, err, sizeof(err)),
	             TASKBOX_E_INVALID);
	cr_assert(strstr(err, "image"), "%s", err);
}

Test(docker, lifecycle_and_exec_basics)
{
	struct taskbox_exec_result res;
	const char *env[] = {"GREETING=hello there", NULL};
	const char *argv[] = {"sh", "-c", "echo \"$GREETING\"; pwd", NULL};
	struct taskbox_exec_req req = {sizeof(req), argv, env, "sub", 10000, 0,
	                               NULL,        NULL, 0,   NULL,  0};
	char id[TASKBOX_SANDBOX_ID_MAX];
	void *c, *x = NULL;

	make_box(inst, id, 0);
	c = attach(inst, id);
	expect_out(c, "pwd; id -u", "/root\n0\n");
	cr_assert_eq(run(c, "echo out; echo err >&2; exit 7", 10000, 0, &res),
	             TASKBOX_OK, "%s", err);
	cr_assert_eq(res.exit_code, 7);
	cr_assert_eq(res.out.len, 4);
	cr_assert(!memcmp(res.out.data, "out\n", 4));
	cr_assert_eq(res.err.len, 4, "stderr %.*s", (int)res.err.len,
	             (char *)res.err.data);
	cr_assert(!memcmp(res.err.data, "err\n", 4));
	res_free(&res);
	/* Environment and a cwd relative to the home. */
	expect_out(c, "mkdir -p sub", "");
	memset(&res, 0, sizeof(res));
	cr_assert_eq(P->ops.exec(c, &req, &res, err, sizeof(err)), TASKBOX_OK);
	cr_assert_eq(res.out.len, strlen("hello there\n/root/sub\n"));
	cr_assert(
	    !memcmp(res.out.data, "hello there\n/root/sub\n", res.out.len));
	res_free(&res);
	/* A missing command is the command's failure, not the op's. */
	argv[0] = "no-such-command";
	req.cwd = NULL;
	memset(&res, 0, sizeof(res));
	cr_assert_eq(P->ops.exec(c, &req, &res, err, sizeof(err)), TASKBOX_OK);
	cr_assert_eq(res.exit_code, 127);
	res_free(&res);
	P->ops.close(c);
	cr_assert_eq(P->ops.destroy(inst, id, err, sizeof(err)), TASKBOX_OK,
	             "%s", err);
	cr_assert_eq(P->ops.destroy(inst, id, err, sizeof(err)),
	             TASKBOX_E_NOT_FOUND);
	cr_assert_eq(P->ops.connect(inst, id, &x, err, sizeof(err)),
	             TASKBOX_E_NOT_FOUND);
	cr_assert_eq(P->ops.connect(inst, "zz", &x, err, sizeof(err)),
	             TASKBOX_E_INVALID);
}

Test(docker, large_output_and_limits)
{
	struct taskbox_exec_result res;
	char id[TASKBOX_SANDBOX_ID_MAX];
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	cr_assert_eq(
	    run(c, "head -c 10485760 /dev/zero; echo x >&2", 60000, 0, &res),
	    TASKBOX_OK, "%s", err);
	cr_assert_eq(res.exit_code, 0);
	cr_assert_eq(res.out.len, 10485760);
	cr_assert(!res.out_truncated);
	cr_assert_eq(res.err.len, 2);
	res_free(&res);
	cr_assert_eq(run(c,
	                 "head -c 100000 /dev/zero; head -c 5000 /dev/zero "
	                 ">&2",
	                 60000, 1000, &res),
	             TASKBOX_OK, "%s", err);
	cr_assert_eq(res.out.len, 1000);
	cr_assert(res.out_truncated);
	cr_assert_eq(res.err.len, 1000);
	cr_assert(res.err_truncated);
	res_free(&res);
	P->ops.close(c);
	P->ops.destroy(inst, id, err, sizeof(err));
}

Test(docker, timeout_kills_the_group)
{
	struct taskbox_exec_result res;
	char id[TASKBOX_SANDBOX_ID_MAX];
	double t0;
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	t0 = now_s();
	cr_assert_eq(
	    run(c, "sleep 300 & echo started; sleep 301", 1500, 0, &res),
	    TASKBOX_OK, "%s", err);
	cr_assert(res.timed_out);
	cr_assert(now_s() - t0 < 30, "took %.1f s", now_s() - t0);
	cr_assert_eq(res.out.len, 8);
	res_free(&res);
	/* Both sleeps were in the command's group: none is left. */
	expect_out(c, "ps -o args | grep -c '^sleep 30[01]' || true", "0\n");
	P->ops.close(c);
	P->ops.destroy(inst, id, err, sizeof(err));
}

static int cancel_after;
static int cancelled_cb(void *arg)
{
	(void)arg;
	return --cancel_after <= 0;
}

Test(docker, cancel_stops_the_exec)
{
	const char *argv[] = {"sleep", "60", NULL};
	struct taskbox_exec_req req = {sizeof(req),  argv, NULL, NULL, 60000, 0,
	                               cancelled_cb, NULL, 0,    NULL, 0};
	struct taskbox_exec_result res;
	char id[TASKBOX_SANDBOX_ID_MAX];
	double t0;
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	memset(&res, 0, sizeof(res));
	cancel_after = 5;
	t0 = now_s();
	cr_assert_eq(P->ops.exec(c, &req, &res, err, sizeof(err)),
	             TASKBOX_E_CANCELLED);
	cr_assert(now_s() - t0 < 30, "took %.1f s", now_s() - t0);
	res_free(&res);
	/* The cancel killed the command: no sleep is left. */
	expect_out(c, "ps -o args | grep -c '^sleep 60' || true", "0\n");
	P->ops.close(c);
	P->ops.destroy(inst, id, err, sizeof(err));
}

Test(docker, until_newline_returns_with_the_first_line)
{
	const char *argv[] = {"sh", "-c",
	                      "printf ans; sleep 0.2; echo $$ > pid; echo wer; "
	                      "exec sleep 60",
	                      NULL};
	struct taskbox_exec_req req = {sizeof(req), argv, NULL, NULL, 60000, 0,
	                               NULL,        NULL, 0,    NULL, 0};
	struct taskbox_exec_result res;
	char id[TASKBOX_SANDBOX_ID_MAX];
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	req.until_newline = 1;
	memset(&res, 0, sizeof(res));
	res.struct_size = sizeof(res);
	cr_assert_eq(P->ops.exec(c, &req, &res, err, sizeof(err)), TASKBOX_OK,
	             "%s", err);
	cr_assert_eq(res.out.len, 7);
	cr_assert(!memcmp(res.out.data, "answer\n", 7));
	cr_assert_eq(res.exit_code, -1, "the command's end was not waited for");
	res_free(&res);
	/* The command was left running; without the flag an exec is waited
	 * for to its end. */
	expect_out(c, "kill -0 $(cat pid) && kill $(cat pid) && echo ran",
	           "ran\n");
	cr_assert_eq(run(c, "echo one; echo two; exit 3", 20000, 0, &res),
	             TASKBOX_OK, "%s", err);
	cr_assert_eq(res.exit_code, 3);
	cr_assert_eq(res.out.len, 8);
	res_free(&res);
	P->ops.close(c);
	P->ops.destroy(inst, id, err, sizeof(err));
}

static void expect_read(void *c, const char *path, uint64_t off, size_t len,
                        const char *want, uint64_t size)
{
	struct taskbox_buf b = {0};
	uint64_t fsize = 0;

	cr_assert_eq(
	    P->ops.read_file(c, path, off, len, &b, &fsize, err, sizeof(err)),
	    TASKBOX_OK, "read %s: %s", path, err);
	cr_assert_eq(fsize, size, "%s size %llu", path,
	             (unsigned long long)fsize);
	cr_assert_eq(b.len, strlen(want), "%s: got %zu bytes", path, b.len);
	cr_assert(!b.len || !memcmp(b.data, want, b.len));
	free(b.data);
}

Test(docker, read_file_windows)
{
	struct taskbox_buf b = {0};
	uint64_t fsize = 0;
	char id[TASKBOX_SANDBOX_ID_MAX], stat_path[64];
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	expect_out(c,
	           "printf 0123456789 > ten; ln -s ten link; mkdir d; "
	           "head -c 3000000 /dev/zero > big; printf END >> big",
	           "");
	expect_read(c, "ten", 0, 100, "0123456789", 10);
	expect_read(c, "/root/ten", 3, 4, "3456", 10);
	expect_read(c, "ten", 10, 5, "", 10);
	expect_read(c, "ten", 50, 5, "", 10);
	expect_read(c, "link", 8, 5, "89", 10);
	expect_read(c, "big", 3000000, 10, "END", 3000003);
	cr_assert_eq(
	    P->ops.read_file(c, "missing", 0, 10, &b, &fsize, err, sizeof(err)),
	    TASKBOX_E_NOT_FOUND);
	cr_assert_eq(
	    P->ops.read_file(c, "d", 0, 10, &b, &fsize, err, sizeof(err)),
	    TASKBOX_E_INVALID);
	/* procfs goes through exec: the supervisor's liveness check. */
	snprintf(stat_path, sizeof(stat_path), "/proc/1/stat");
	cr_assert_eq(P->ops.read_file(c, stat_path, 0, 4096, &b, &fsize, err,
	                              sizeof(err)),
	             TASKBOX_OK, "%s", err);
	cr_assert(b.len > 20 && !memcmp(b.data, "1 (", 3));
	free(b.data);
	cr_assert_eq(P->ops.read_file(c, "/proc/999999/stat", 0, 4096, &b,
	                              &fsize, err, sizeof(err)),
	             TASKBOX_E_NOT_FOUND, "%s", err);
	P->ops.close(c);
	P->ops.destroy(inst, id, err, sizeof(err));
}

Test(docker, write_file_as_the_sandbox_user)
{
	char id[TASKBOX_SANDBOX_ID_MAX];
	void *c, *in2 = NULL;

	cr_assert_eq(init_with(&in2, "\"user\":\"user\",\"env\":{\"TB_X\":"
	                             "\"y z\"}"),
	             TASKBOX_OK, "%s", err);
	make_box(in2, id, 0);
	c = attach(in2, id);
	/* The image's PATH stays; the env setting is added to it. */
	expect_out(c, "pwd; id -u; echo \"$TB_X\"; command -v python3",
	           "/home/user\n1000\ny z\n/usr/bin/python3\n");
	cr_assert_eq(P->ops.write_file(c, "a/b/c.txt",
	                               (const unsigned char *)"hello", 5, 0640,
	                               err, sizeof(err)),
	             TASKBOX_OK, "%s", err);
	expect_read(c, "a/b/c.txt", 0, 100, "hello", 5);
	expect_out(c, "stat -c '%a %u' a a/b a/b/c.txt",
	           "755 1000\n755 1000\n"
	           "640 1000\n");
	/* Replacing keeps working, and the user can edit it. */
	cr_assert_eq(P->ops.write_file(c, "a/b/c.txt",
	                               (const unsigned char *)"bye", 3, 0600,
	                               err, sizeof(err)),
	             TASKBOX_OK, "%s", err);
	expect_out(c, "cat a/b/c.txt; echo more >> a/b/c.txt", "bye");
	P->ops.close(c);
	P->ops.destroy(in2, id, err, sizeof(err));
	P->ops.fini(in2);
}

Test(docker, engine_errors)
{
	struct taskbox_create_req req = {sizeof(req), NULL, 0, NULL};
	char id[TASKBOX_SANDBOX_ID_MAX], s[512], sock[4096];
	void *x = NULL;
	pid_t pid;
	int st;

	/* Missing image: NOT_FOUND naming it. */
	snprintf(s, sizeof(s), "{\"host\":\"%s\",\"image\":\"no-such-image\"}",
	         env_or_die("DOCKER_HOST"));
	cr_assert_eq(P->ops.init(&host, s, &x, err, sizeof(err)), TASKBOX_OK);
	cr_assert_eq(P->ops.create(x, &req, id, err, sizeof(err)),
	             TASKBOX_E_NOT_FOUND, "%s", err);
	cr_assert(strstr(err, "no-such-image"), "%s", err);
	P->ops.fini(x);
	/* Unknown template. */
	req.template_name = "nope";
	cr_assert_eq(P->ops.create(inst, &req, id, err, sizeof(err)),
	             TASKBOX_E_NOT_FOUND);
	req.template_name = NULL;
	/* Engine down: UNAVAILABLE naming the socket. */
	cr_assert_eq(
	    P->ops.init(&host,
	                "{\"host\":\"unix:///nonexistent/engine.sock\","
	                "\"image\":\"i\"}",
	                &x, err, sizeof(err)),
	    TASKBOX_OK);
	cr_assert_eq(P->ops.create(x, &req, id, err, sizeof(err)),
	             TASKBOX_E_UNAVAILABLE);
	cr_assert(strstr(err, "/nonexistent/engine.sock"), "%s", err);
	P->ops.fini(x);
	/* A path that is not a socket. */
	cr_assert_eq(P->ops.init(&host,
	                         "{\"host\":\"unix:///etc/passwd\","
	                         "\"image\":\"i\"}",
	                         &x, err, sizeof(err)),
	             TASKBOX_OK);
	cr_assert_eq(P->ops.create(x, &req, id, err, sizeof(err)),
	             TASKBOX_E_UNAVAILABLE);
	P->ops.fini(x);
	/* Permission denied on the socket: as an unprivileged user. */
	if (getuid() != 0)
		return;
	snprintf(sock, sizeof(sock), "%s", env_or_die("DOCKER_HOST"));
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		if (P->ops.init(&host, s, &x, err, sizeof(err)) != TASKBOX_OK)
			_exit(3);
		st = P->ops.create(x, &req, id, err, sizeof(err));
		fprintf(stderr, "as nobody: %d %s\n", st, err);
		_exit(st == TASKBOX_E_PERMISSION && strstr(err, sock + 7) ? 0
		                                                          : 4);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}

/* Sends method path to the engine behind the plugin's back (a stop, a
 * removal, ...). */
static void engine_request(const char *method, const char *path)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
	         "curl -sf -X %s --unix-socket '%s' 'http://localhost%s' "
	         ">/dev/null",
	         method, env_or_die("DOCKER_HOST") + 7, path);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(docker, removed_or_stopped_behind_our_back)
{
	struct taskbox_exec_result res;
	struct taskbox_buf b = {0};
	char id[TASKBOX_SANDBOX_ID_MAX], path[256];
	uint64_t fsize;
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	snprintf(path, sizeof(path), "/containers/%s/stop?t=0", id);
	engine_request("POST", path);
	cr_assert_eq(run(c, "true", 10000, 0, &res), TASKBOX_E_GONE);
	cr_assert(strstr(err, id) || strstr(err, "running") ||
	              strstr(err, "state"),
	          "%s", err);
	res_free(&res);
	P->ops.close(c);
	/* connect starts a stopped sandbox again. */
	c = attach(inst, id);
	expect_out(c, "echo back", "back\n");
	cr_assert_eq(P->ops.destroy(inst, id, err, sizeof(err)), TASKBOX_OK);
	cr_assert_eq(run(c, "true", 10000, 0, &res), TASKBOX_E_GONE);
	res_free(&res);
	cr_assert_eq(
	    P->ops.read_file(c, "x", 0, 10, &b, &fsize, err, sizeof(err)),
	    TASKBOX_E_GONE, "%s", err);
	P->ops.close(c);
}

Test(docker, lifetimes)
{
	char a[TASKBOX_SANDBOX_ID_MAX], b[TASKBOX_SANDBOX_ID_MAX];
	char d[TASKBOX_SANDBOX_ID_MAX], e[TASKBOX_SANDBOX_ID_MAX];
	double t0 = now_s();
	void *c, *x = NULL;

	/* a: renewed past its label's deadline; b: renewed shorter; d: just
	 * expires. */
	make_box(inst, a, 20);
	c = attach(inst, a);
	cr_assert_eq(P->ops.renew(c, 600, err, sizeof(err)), TASKBOX_OK, "%s",
	             err);
	P->ops.close(c);
	cr_assert(now_s() - t0 < 19, "the engine is too slow: %.1f s",
	          now_s() - t0);
	make_box(inst, b, 600);
	c = attach(inst, b);
	cr_assert_eq(P->ops.renew(c, 1, err, sizeof(err)), TASKBOX_OK, "%s",
	             err);
	cr_assert_eq(P->ops.renew(c, 0, err, sizeof(err)), TASKBOX_E_INVALID);
	P->ops.close(c);
	make_box(inst, d, 1);
	while (now_s() - t0 < 21)
		sleep(1);
	c = attach(inst, a);
	P->ops.close(c);
	/* Expired: connect removes it and says GONE; then it is unknown. */
	cr_assert_eq(P->ops.connect(inst, b, &x, err, sizeof(err)),
	             TASKBOX_E_GONE, "%s", err);
	cr_assert_eq(P->ops.connect(inst, b, &x, err, sizeof(err)),
	             TASKBOX_E_NOT_FOUND);
	/* A create sweeps expired ones. */
	make_box(inst, e, 0);
	cr_assert_eq(P->ops.destroy(inst, d, err, sizeof(err)),
	             TASKBOX_E_NOT_FOUND);
	P->ops.destroy(inst, a, err, sizeof(err));
	P->ops.destroy(inst, e, err, sizeof(err));
}

struct renewer {
	void *c;
	int rounds, failed;
	char err[TASKBOX_ERRBUF_SIZE];
};

static void *renew_loop(void *arg)
{
	struct renewer *r = arg;

	for (int i = 0; i < r->rounds && !r->failed; i++)
		if (P->ops.renew(r->c, 600, r->err, sizeof(r->err)) !=
		    TASKBOX_OK)
			r->failed = 1;
	return NULL;
}

/* A renewal rewrites the sandbox's state file while other calls connect
 * and read it (a session's calls run side by side): no connect may fail
 * for it. */
Test(docker, connects_while_another_call_renews)
{
	char id[TASKBOX_SANDBOX_ID_MAX];
	struct renewer r = {.rounds = 40};
	pthread_t t;
	void *c;

	make_box(inst, id, 0);
	r.c = attach(inst, id);
	cr_assert_eq(pthread_create(&t, NULL, renew_loop, &r), 0);
	for (int i = 0; i < 40; i++) {
		cr_assert_eq(P->ops.connect(inst, id, &c, err, sizeof(err)),
		             TASKBOX_OK, "connect %d: %s", i, err);
		P->ops.close(c);
	}
	pthread_join(t, NULL);
	cr_assert_not(r.failed, "renew: %s", r.err);
	P->ops.close(r.c);
	P->ops.destroy(inst, id, err, sizeof(err));
}

struct bg_exec {
	void *c;
	int code;
	struct taskbox_exec_result res;
};

static void *bg_run(void *arg)
{
	struct bg_exec *e = arg;
	const char *argv[] = {"sh", "-c", "sleep 2; echo done", NULL};
	struct taskbox_exec_req req = {sizeof(req), argv, NULL, NULL, 30000, 0,
	                               NULL,        NULL, 0,    NULL, 0};
	char e2[TASKBOX_ERRBUF_SIZE];

	memset(&e->res, 0, sizeof(e->res));
	e->code = P->ops.exec(e->c, &req, &e->res, e2, sizeof(e2));
	fprintf(stderr, "exec across a restart: %d %s\n", e->code,
	        e->code ? e2 : "");
	return NULL;
}

Test(docker, engine_restart_mid_exec_and_mid_task)
{
	char id[TASKBOX_SANDBOX_ID_MAX];
	struct bg_exec e = {0};
	pthread_t t;
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	/* A background task that outlives its exec and the engine. */
	expect_out(c,
	           "setsid sh -c 'sleep 3; echo finished > task.out' "
	           "</dev/null >/dev/null 2>&1 &",
	           "");
	e.c = attach(inst, id);
	pthread_create(&t, NULL, bg_run, &e);
	nanosleep(&(struct timespec){0, 500000000}, NULL);
	engine("service-stop");
	engine("service-start");
	pthread_join(t, NULL);
	/* The exec either finished or failed as a transport error. */
	cr_assert(e.code == TASKBOX_OK || e.code == TASKBOX_E_UNAVAILABLE ||
	              e.code == TASKBOX_E_PROTOCOL ||
	              e.code == TASKBOX_E_NOT_FOUND,
	          "code %d", e.code);
	res_free(&e.res);
	P->ops.close(e.c);
	P->ops.close(c);
	/* A fresh connection after the restart finds the task's result. */
	sleep(3);
	c = attach(inst, id);
	expect_out(c, "cat task.out", "finished\n");
	P->ops.close(c);
	cr_assert_eq(P->ops.destroy(inst, id, err, sizeof(err)), TASKBOX_OK);
}

/* One sandbox round trip through an instance with these settings. */
static void round_trip(const char *settings)
{
	char id[TASKBOX_SANDBOX_ID_MAX];
	void *x = NULL, *c;

	cr_assert_eq(P->ops.init(&host, settings, &x, err, sizeof(err)),
	             TASKBOX_OK, "%s", err);
	make_box(x, id, 0);
	c = attach(x, id);
	expect_out(c, "echo over tcp", "over tcp\n");
	P->ops.close(c);
	cr_assert_eq(P->ops.destroy(x, id, err, sizeof(err)), TASKBOX_OK);
	P->ops.fini(x);
}

/* An instance with these settings reaches the engine: an unknown id is
 * NOT_FOUND (the engine's answer), not a transport error. */
static void reaches_engine(const char *settings)
{
	void *x = NULL, *c = NULL;

	cr_assert_eq(P->ops.init(&host, settings, &x, err, sizeof(err)),
	             TASKBOX_OK, "%s", err);
	cr_assert_eq(P->ops.connect(x,
	                            "0123456789abcdef0123456789abcdef"
	                            "0123456789abcdef0123456789abcdef",
	                            &c, err, sizeof(err)),
	             TASKBOX_E_NOT_FOUND, "%s: %s", settings, err);
	P->ops.fini(x);
}

Test(docker, tcp_and_tls_with_client_certificates)
{
	const char *image = env_or_die("TASKBOX_DOCKER_IMAGE");
	const char *tls = env_or_die("TASKBOX_DOCKER_TLS");
	const char *dir = env_or_die("TASKBOX_DOCKER_TLS_DIR");
	struct taskbox_create_req req = {sizeof(req), NULL, 0, NULL};
	char s[4096], id[TASKBOX_SANDBOX_ID_MAX];
	void *x = NULL;

	snprintf(s, sizeof(s), "{\"host\":\"%s\",\"image\":\"%s\"}",
	         env_or_die("TASKBOX_DOCKER_TCP"), image);
	reaches_engine(s);
	/* A whole round trip, the exec stream included, over TLS. */
	snprintf(s, sizeof(s),
	         "{\"host\":\"%s\",\"image\":\"%s\",\"tls\":\"%s\"}", tls,
	         image, dir);
	round_trip(s);
	/* The DOCKER_TLS_VERIFY / DOCKER_CERT_PATH conventions. */
	setenv("DOCKER_TLS_VERIFY", "1", 1);
	setenv("DOCKER_CERT_PATH", dir, 1);
	snprintf(s, sizeof(s), "{\"host\":\"%s\",\"image\":\"%s\"}", tls,
	         image);
	reaches_engine(s);
	unsetenv("DOCKER_TLS_VERIFY");
	/* Plain HTTP to the TLS port fails, and says where. */
	cr_assert_eq(P->ops.init(&host, s, &x, err, sizeof(err)), TASKBOX_OK);
	cr_assert_eq(P->ops.create(x, &req, id, err, sizeof(err)),
	             TASKBOX_E_UNAVAILABLE, "%s", err);
	cr_assert(strstr(err, tls), "%s", err);
	P->ops.fini(x);
}

/* PID 1's command line (NULs as spaces) in a new sandbox of instance in,
 * which is destroyed again. */
static void pid1_of_new_box(void *in, char *out, size_t n)
{
	struct taskbox_exec_result res;
	char id[TASKBOX_SANDBOX_ID_MAX];
	void *c;

	make_box(in, id, 0);
	c = attach(in, id);
	cr_assert_eq(run(c, "tr '\\0' ' ' </proc/1/cmdline", 20000, 0, &res),
	             TASKBOX_OK, "exec: %s", err);
	snprintf(out, n, "%.*s", (int)res.out.len,
	         res.out.data ? (char *)res.out.data : "");
	res_free(&res);
	P->ops.close(c);
	cr_assert_eq(P->ops.destroy(in, id, err, sizeof(err)), TASKBOX_OK, "%s",
	             err);
}

/* How many containers the engine at docker_host has, stopped ones too. */
static int containers_on(const char *docker_host)
{
	char cmd[4096], buf[4096];
	FILE *p;

	snprintf(cmd, sizeof(cmd),
	         "curl -sf --unix-socket '%s' "
	         "'http://localhost/containers/json?all=true' | "
	         "grep -o '\"Id\"' | wc -l",
	         docker_host + 7);
	p = popen(cmd, "r");
	cr_assert(p);
	cr_assert(fgets(buf, sizeof(buf), p));
	pclose(p);
	return atoi(buf);
}

Test(docker, init_setting_is_checked)
{
	void *x = NULL;

	cr_assert_eq(init_with(&x, "\"init\":\"yes\""), TASKBOX_E_INVALID);
	cr_assert(strstr(err, "init must be true, false or \"auto\""), "%s",
	          err);
	cr_assert_eq(init_with(&x, "\"init\":1"), TASKBOX_E_INVALID);
	cr_assert_eq(init_with(&x, "\"init\":true"), TASKBOX_OK, "%s", err);
	P->ops.fini(x);
}

/* init "auto" (the default) on an engine that has an init: PID 1 is the
 * engine's init, and nothing is logged. init false: PID 1 is the idle
 * command itself. */
Test(docker, init_auto_and_false_on_an_engine_with_init)
{
	char pid1[512];
	void *off = NULL;

	no_init_lines = 0;
	pid1_of_new_box(inst, pid1, sizeof(pid1));
	cr_assert(strstr(pid1, "sleep infinity") && strncmp(pid1, "sleep", 5),
	          "PID 1 is %s", pid1);
	cr_assert_eq(init_with(&off, "\"init\":false"), TASKBOX_OK, "%s", err);
	pid1_of_new_box(off, pid1, sizeof(pid1));
	cr_assert_str_eq(pid1, "sleep infinity ");
	P->ops.fini(off);
	cr_assert_eq(no_init_lines, 0);
}

/* init "auto" on an engine without one: sandboxes are made without it,
 * and the log says so once per instance. */
Test(docker, init_auto_on_an_engine_without_init)
{
	char pid1[512];
	void *in = NULL;

	no_init_lines = 0;
	cr_assert_eq(init_noinit(&in, ""), TASKBOX_OK, "%s", err);
	pid1_of_new_box(in, pid1, sizeof(pid1));
	cr_assert_str_eq(pid1, "sleep infinity ");
	pid1_of_new_box(in, pid1, sizeof(pid1));
	cr_assert_str_eq(pid1, "sleep infinity ");
	cr_assert_eq(no_init_lines, 1);
	P->ops.fini(in);
}

/* init true on an engine without one: create fails, naming the missing
 * binary and the setting, and leaves no container behind. */
Test(docker, init_true_on_an_engine_without_init_fails_clearly)
{
	struct taskbox_create_req req = {sizeof(req), NULL, 0, NULL};
	const char *noinit = env_or_die("TASKBOX_DOCKER_NOINIT_HOST");
	char id[TASKBOX_SANDBOX_ID_MAX];
	int before = containers_on(noinit);
	void *in = NULL;

	cr_assert_eq(init_noinit(&in, "\"init\":true"), TASKBOX_OK, "%s", err);
	cr_assert_eq(P->ops.create(in, &req, id, err, sizeof(err)),
	             TASKBOX_E_UNAVAILABLE);
	cr_assert(strstr(err, "no-such-init/catatonit"), "%s", err);
	cr_assert(strstr(err, "the docker setting init is true"), "%s", err);
	cr_assert_eq(containers_on(noinit), before);
	P->ops.fini(in);
}

/* read_files' items: the host's struct, unanswered. */
static void item_set(struct taskbox_read_item *it, const char *path,
                     uint64_t offset, size_t length)
{
	memset(it, 0, sizeof(*it));
	it->struct_size = sizeof(*it);
	it->path = path;
	it->offset = offset;
	it->length = length;
	it->status = -1;
	it->file_size = UINT64_MAX;
}

static int read_batch(void *c, struct taskbox_read_item *items, size_t n)
{
	struct taskbox_read_item *ptrs[64];

	cr_assert(n <= 64);
	for (size_t i = 0; i < n; i++)
		ptrs[i] = &items[i];
	cr_assert(P->struct_size >=
	                  offsetof(struct taskbox_provider, read_files) +
	                      sizeof(P->read_files) &&
	              P->read_files,
	          "the plugin declares no read_files");
	return P->read_files(c, ptrs, n, err, sizeof(err));
}

static void items_free(struct taskbox_read_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(items[i].data.data);
}

/* An item that read_file would answer with want (size bytes in all). */
static void expect_item(const struct taskbox_read_item *it, const char *want,
                        uint64_t size)
{
	cr_assert_eq(it->status, TASKBOX_OK, "%s: status %d", it->path,
	             it->status);
	cr_assert_eq(it->file_size, size, "%s size %llu", it->path,
	             (unsigned long long)it->file_size);
	cr_assert_eq(it->data.len, strlen(want), "%s: got %zu bytes", it->path,
	             it->data.len);
	cr_assert(!it->data.len || !memcmp(it->data.data, want, it->data.len),
	          "%s: got %.*s", it->path, (int)it->data.len,
	          (char *)it->data.data);
}

Test(docker, read_files_reads_a_batch_like_read_file)
{
	struct taskbox_read_item items[6];
	char id[TASKBOX_SANDBOX_ID_MAX];
	void *c;

	cr_assert_geq(P->abi_minor, 2);
	make_box(inst, id, 0);
	c = attach(inst, id);
	expect_out(c,
	           "printf 0123456789 > ten; ln -s ten link; mkdir d; "
	           "head -c 3000000 /dev/zero > big; printf END >> big",
	           "");
	item_set(&items[0], "ten", 3, 4);
	item_set(&items[1], "link", 8, 5);
	item_set(&items[2], "missing", 0, 10);
	item_set(&items[3], "/root/big", 3000000, 10);
	item_set(&items[4], "/proc/1/stat", 0, 4096);
	item_set(&items[5], "ten", 50, 5);
	cr_assert_eq(read_batch(c, items, 6), TASKBOX_OK, "%s", err);
	expect_item(&items[0], "3456", 10);
	expect_item(&items[1], "89", 10);
	cr_assert_eq(items[2].status, TASKBOX_E_NOT_FOUND);
	cr_assert_null(items[2].data.data);
	expect_item(&items[3], "END", 3000003);
	cr_assert_eq(items[4].status, TASKBOX_OK);
	cr_assert(items[4].data.len > 20 &&
	          !memcmp(items[4].data.data, "1 (", 3));
	expect_item(&items[5], "", 10);
	items_free(items, 6);
	/* A directory fails the batch, naming it. */
	item_set(&items[0], "ten", 0, 10);
	item_set(&items[1], "d", 0, 10);
	item_set(&items[2], "big", 0, 3);
	cr_assert_eq(read_batch(c, items, 3), TASKBOX_E_INVALID, "%s", err);
	cr_assert(strstr(err, "d is a directory"), "%s", err);
	items_free(items, 3);
	/* An empty path is refused. */
	item_set(&items[0], "", 0, 10);
	cr_assert_eq(read_batch(c, items, 1), TASKBOX_E_INVALID);
	/* No items: nothing to do. */
	cr_assert_eq(read_batch(c, items, 0), TASKBOX_OK, "%s", err);
	P->ops.close(c);
	P->ops.destroy(inst, id, err, sizeof(err));
}

Test(docker, read_files_of_many_files)
{
	struct taskbox_read_item items[16];
	char id[TASKBOX_SANDBOX_ID_MAX], paths[16][32], want[32];
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	expect_out(c, "for i in $(seq 0 15); do printf file-$i > f$i; done",
	           "");
	for (int i = 0; i < 16; i++) {
		snprintf(paths[i], sizeof(paths[i]), "f%d", i);
		item_set(&items[i], paths[i], 0, 100);
	}
	cr_assert_eq(read_batch(c, items, 16), TASKBOX_OK, "%s", err);
	for (int i = 0; i < 16; i++) {
		snprintf(want, sizeof(want), "file-%d", i);
		expect_item(&items[i], want, strlen(want));
	}
	items_free(items, 16);
	/* Files of one directory: one asked for twice, one missing. */
	expect_out(c, "mkdir sub", "");
	item_set(&items[0], "f3", 1, 3);
	item_set(&items[1], "f3", 5, 10);
	item_set(&items[2], "nothing", 0, 10);
	item_set(&items[3], "/root/f12", 0, 100);
	cr_assert_eq(read_batch(c, items, 4), TASKBOX_OK, "%s", err);
	expect_item(&items[0], "ile", 6);
	expect_item(&items[1], "3", 6);
	cr_assert_eq(items[2].status, TASKBOX_E_NOT_FOUND);
	expect_item(&items[3], "file-12", 7);
	items_free(items, 4);
	item_set(&items[0], "f3", 0, 10);
	item_set(&items[1], "sub", 0, 10);
	cr_assert_eq(read_batch(c, items, 2), TASKBOX_E_INVALID, "%s", err);
	cr_assert(strstr(err, "sub is a directory"), "%s", err);
	items_free(items, 2);
	P->ops.close(c);
	P->ops.destroy(inst, id, err, sizeof(err));
}

Test(docker, connection_reuse_setting_is_checked)
{
	void *x = NULL;

	cr_assert_eq(init_with(&x, "\"connection_reuse\":-1"),
	             TASKBOX_E_INVALID);
	cr_assert(strstr(err, "connection_reuse must be an integer from 0 to "
	                      "300"),
	          "%s", err);
	cr_assert_eq(init_with(&x, "\"connection_reuse\":301"),
	             TASKBOX_E_INVALID);
	cr_assert(strstr(err, "connection_reuse"), "%s", err);
	cr_assert_eq(init_with(&x, "\"connection_reuse\":\"x\""),
	             TASKBOX_E_INVALID);
	cr_assert(strstr(err, "connection_reuse"), "%s", err);
	cr_assert_eq(init_with(&x, "\"connection_reuse\":1.5"),
	             TASKBOX_E_INVALID);
	cr_assert_eq(init_with(&x, "\"connection_reuse\":0"), TASKBOX_OK, "%s",
	             err);
	P->ops.fini(x);
	cr_assert_eq(init_with(&x, "\"connection_reuse\":300"), TASKBOX_OK,
	             "%s", err);
	P->ops.fini(x);
}

/* socat between an instance and the engine, logging what passes (-v) and
 * each connection it accepts (-d -d). */
struct spy {
	pid_t pid;
	char sock[1024], log[1024];
};

static void spy_start(struct spy *s, const char *name)
{
	const char *dir = env_or_die("TASKBOX_DOCKER_ENGINE_DIR");
	char listen[1200], to[1200];
	struct stat st;

	snprintf(s->sock, sizeof(s->sock), "%s/%s.sock", dir, name);
	snprintf(s->log, sizeof(s->log), "%s/%s.log", dir, name);
	snprintf(listen, sizeof(listen), "UNIX-LISTEN:%s,fork", s->sock);
	snprintf(to, sizeof(to), "UNIX-CONNECT:%s",
	         env_or_die("DOCKER_HOST") + 7);
	unlink(s->sock);
	s->pid = fork();
	cr_assert_neq(s->pid, -1);
	if (s->pid == 0) {
		FILE *log = fopen(s->log, "w");
		setpgid(0, 0);
		if (!log || dup2(fileno(log), 2) < 0)
			_exit(126);
		execlp("socat", "socat", "-d", "-d", "-v", listen, to,
		       (char *)NULL);
		_exit(127);
	}
	spy_pid = s->pid;
	for (int i = 0; i < 100 && stat(s->sock, &st); i++)
		nanosleep(&(struct timespec){0, 50000000}, NULL);
	cr_assert_eq(stat(s->sock, &st), 0, "socat did not listen on %s",
	             s->sock);
}

static void spy_stop(struct spy *s)
{
	kill(-s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	spy_pid = 0;
	unlink(s->sock);
	unlink(s->log);
}

/* How often needle is in what the spy logged so far. */
static int spy_count(const struct spy *s, const char *needle)
{
	FILE *f = fopen(s->log, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int count = 0;

	cr_assert(f, "%s", s->log);
	do {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap);
			cr_assert(buf);
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	for (const char *p = buf; p && (size_t)(p - buf) < len;) {
		p = memmem(p, len - (size_t)(p - buf), needle, strlen(needle));
		if (p) {
			count++;
			p += strlen(needle);
		}
	}
	free(buf);
	return count;
}

/* Settings reaching the engine through the spy. */
static void init_through(void **x, const struct spy *s, const char *extra)
{
	char settings[2048];

	snprintf(settings, sizeof(settings),
	         "{\"host\":\"unix://%s\",\"image\":\"%s\"%s%s}", s->sock,
	         env_or_die("TASKBOX_DOCKER_IMAGE"), *extra ? "," : "", extra);
	cr_assert_eq(P->ops.init(&host, settings, x, err, sizeof(err)),
	             TASKBOX_OK, "%s", err);
}

/* Within connection_reuse a connect asks the engine nothing, and calls
 * reuse the engine's connections; with connection_reuse 0 every connect
 * inspects the container again. */
Test(docker, connect_reuses_its_check_and_the_engine_connections)
{
	char id[TASKBOX_SANDBOX_ID_MAX], inspect[TASKBOX_SANDBOX_ID_MAX + 32];
	struct taskbox_read_item items[4];
	struct spy spy;
	void *x = NULL, *c;
	int conns;

	make_box(inst, id, 0);
	c = attach(inst, id);
	expect_out(c, "printf 0123456789 > ten", "");
	P->ops.close(c);
	snprintf(inspect, sizeof(inspect), "containers/%s/json", id);
	spy_start(&spy, "spy-reuse");
	init_through(&x, &spy, "");
	c = attach(x, id);
	P->ops.close(c);
	cr_assert_eq(spy_count(&spy, inspect), 1);
	conns = spy_count(&spy, "accepting connection");
	for (int i = 0; i < 5; i++) {
		c = attach(x, id);
		expect_read(c, "ten", 2, 3, "234", 10);
		P->ops.close(c);
	}
	cr_assert_eq(spy_count(&spy, inspect), 1,
	             "a connect within connection_reuse inspected");
	cr_assert_leq(spy_count(&spy, "accepting connection"), conns + 1,
	              "%d connections for 5 reads after %d",
	              spy_count(&spy, "accepting connection"), conns);
	/* A batch's GETs go out at once, each on its own connection. */
	c = attach(x, id);
	conns = spy_count(&spy, "accepting connection");
	for (int i = 0; i < 4; i++)
		item_set(&items[i], "ten", (uint64_t)i, 1);
	cr_assert_eq(read_batch(c, items, 4), TASKBOX_OK, "%s", err);
	cr_assert_geq(spy_count(&spy, "accepting connection"), conns + 2);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(items[i].data.len, 1);
	items_free(items, 4);
	P->ops.close(c);
	P->ops.fini(x);
	/* connection_reuse 0: each connect checks. */
	init_through(&x, &spy, "\"connection_reuse\":0");
	c = attach(x, id);
	P->ops.close(c);
	c = attach(x, id);
	P->ops.close(c);
	cr_assert_eq(spy_count(&spy, inspect), 3);
	P->ops.fini(x);
	spy_stop(&spy);
	P->ops.destroy(inst, id, err, sizeof(err));
}

/* A sandbox removed after a connect checked it: a connect within
 * connection_reuse still succeeds (it asks the engine nothing), and every
 * op on it then says GONE, never a missing file or a made-up answer; the
 * next connect says NOT_FOUND. */
Test(docker, sandbox_removed_behind_the_caches_back)
{
	const char *argv[] = {"true", NULL};
	struct taskbox_exec_req req = {sizeof(req), argv, NULL, NULL, 10000, 0,
	                               NULL,        NULL, 0,    NULL, 0};
	struct taskbox_exec_result res;
	struct taskbox_read_item items[2];
	struct taskbox_buf b = {0};
	char id[TASKBOX_SANDBOX_ID_MAX], path[256];
	uint64_t fsize;
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	expect_out(c, "printf x > f", "");
	P->ops.close(c);
	snprintf(path, sizeof(path), "/containers/%s?force=true&v=true", id);
	engine_request("DELETE", path);
	c = attach(inst, id);
	item_set(&items[0], "f", 0, 10);
	item_set(&items[1], "missing", 0, 10);
	cr_assert_eq(read_batch(c, items, 2), TASKBOX_E_GONE, "%s", err);
	items_free(items, 2);
	cr_assert_eq(
	    P->ops.read_file(c, "f", 0, 10, &b, &fsize, err, sizeof(err)),
	    TASKBOX_E_GONE, "%s", err);
	P->ops.close(c);
	/* What the ops found went for good: connect asks the engine. */
	cr_assert_eq(P->ops.connect(inst, id, &c, err, sizeof(err)),
	             TASKBOX_E_NOT_FOUND, "%s", err);
	/* The same for exec, on another sandbox. */
	make_box(inst, id, 0);
	c = attach(inst, id);
	P->ops.close(c);
	snprintf(path, sizeof(path), "/containers/%s?force=true&v=true", id);
	engine_request("DELETE", path);
	c = attach(inst, id);
	memset(&res, 0, sizeof(res));
	cr_assert_eq(P->ops.exec(c, &req, &res, err, sizeof(err)),
	             TASKBOX_E_GONE, "%s", err);
	res_free(&res);
	P->ops.close(c);
	/* And for read_file. */
	make_box(inst, id, 0);
	c = attach(inst, id);
	P->ops.close(c);
	snprintf(path, sizeof(path), "/containers/%s?force=true&v=true", id);
	engine_request("DELETE", path);
	c = attach(inst, id);
	cr_assert_eq(
	    P->ops.read_file(c, "f", 0, 10, &b, &fsize, err, sizeof(err)),
	    TASKBOX_E_GONE, "%s", err);
	P->ops.close(c);
}

/* A sandbox stopped after a connect checked it: the next call starts it
 * again, as a connect that checked would have. */
Test(docker, sandbox_stopped_behind_the_caches_back)
{
	struct taskbox_read_item items[1];
	char id[TASKBOX_SANDBOX_ID_MAX], path[256];
	void *c;

	make_box(inst, id, 0);
	c = attach(inst, id);
	expect_out(c, "printf x > f", "");
	P->ops.close(c);
	snprintf(path, sizeof(path), "/containers/%s/stop?t=0", id);
	engine_request("POST", path);
	c = attach(inst, id);
	expect_out(c, "echo back", "back\n");
	item_set(&items[0], "f", 0, 10);
	cr_assert_eq(read_batch(c, items, 1), TASKBOX_OK, "%s", err);
	expect_item(&items[0], "x", 1);
	items_free(items, 1);
	P->ops.close(c);
	P->ops.destroy(inst, id, err, sizeof(err));
}

/* Ownership (ABI 1.5): the owner is a label set at create, describe
 * answers from connect, list filters by the labels. */

static void make_owned(void *in, char *id, uint32_t lifetime, const char *owner)
{
	struct taskbox_create_req req = {sizeof(req), NULL, lifetime, owner};

	cr_assert_eq(P->ops.create(in, &req, id, err, sizeof(err)), TASKBOX_OK,
	             "create for %s: %s", owner ? owner : "(none)", err);
	cr_assert_eq(strlen(id), 64);
}

static void describe_id(void *in, const char *id,
                        struct taskbox_sandbox_info *info)
{
	void *c = attach(in, id);

	memset(info, 0, sizeof(*info));
	info->struct_size = sizeof(*info);
	cr_assert_eq(P->describe(c, info, err, sizeof(err)), TASKBOX_OK,
	             "describe: %s", err);
	P->ops.close(c);
	cr_assert_str_eq(info->id, id);
}

/* What a listing saw, and when it asks to stop. */
struct seen {
	int n, stop_after;
	char ids[32][TASKBOX_SANDBOX_ID_MAX];
	char owners[32][TASKBOX_OWNER_MAX];
	int64_t expires[32], created[32];
};

static int collect(void *arg, const struct taskbox_sandbox_info *info)
{
	struct seen *s = arg;

	cr_assert_eq(info->struct_size, sizeof(*info));
	if (s->n < 32) {
		snprintf(s->ids[s->n], TASKBOX_SANDBOX_ID_MAX, "%s", info->id);
		snprintf(s->owners[s->n], TASKBOX_OWNER_MAX, "%s", info->owner);
		s->expires[s->n] = info->expires_s;
		s->created[s->n] = info->created_s;
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

static void list_owner(const char *owner, struct seen *s, int stop_after)
{
	memset(s, 0, sizeof(*s));
	s->stop_after = stop_after;
	cr_assert_eq(P->list(inst, owner, collect, s, err, sizeof(err)),
	             TASKBOX_OK, "list: %s", err);
	cr_assert_leq(s->n, 32);
}

/* The index of id in s, or -1. */
static int seen_at(const struct seen *s, const char *id)
{
	for (int i = 0; i < s->n && i < 32; i++)
		if (!strcmp(s->ids[i], id))
			return i;
	return -1;
}

/* Runs a shell command; returns its first line of output (static). */
static const char *shell_line(const char *cmd)
{
	static char line[1024];
	FILE *p = popen(cmd, "r");

	cr_assert(p, "popen %s", cmd);
	line[0] = '\0';
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	cr_assert_eq(pclose(p), 0, "%s", cmd);
	return line;
}

/* The principal label of container id, as the engine's inspect says. */
static const char *engine_label(const char *id)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
	         "curl -sf --unix-socket '%s' "
	         "'http://localhost/containers/%s/json' | python3 -c "
	         "'import json,sys; print(json.load(sys.stdin)[\"Config\"]"
	         "[\"Labels\"].get(\"org.taskbox.principal\", \"(none)\"))'",
	         env_or_die("DOCKER_HOST") + 7, id);
	return shell_line(cmd);
}

Test(docker, owners_are_labels_described_and_listed)
{
	char a[TASKBOX_SANDBOX_ID_MAX], b[TASKBOX_SANDBOX_ID_MAX];
	char n[TASKBOX_SANDBOX_ID_MAX], e[TASKBOX_SANDBOX_ID_MAX];
	struct taskbox_sandbox_info info;
	struct seen s;
	int64_t t0 = (int64_t)time(NULL);
	void *c;

	cr_assert_eq(P->abi_minor, TASKBOX_ABI_MINOR);
	cr_assert(P->describe && P->list);
	make_owned(inst, a, 600, "alice@example.com");
	make_owned(inst, b, 900, "bob smith");
	make_owned(inst, n, 0, NULL);
	make_owned(inst, e, 600, "k=v=w");

	/* The label is on the container, as the engine reports it. */
	cr_assert_str_eq(engine_label(a), "alice@example.com");
	cr_assert_str_eq(engine_label(b), "bob smith");
	cr_assert_str_eq(engine_label(n), "(none)");
	/* ... and nowhere the sandbox's commands can read it. */
	c = attach(inst, a);
	expect_out(c,
	           "env | grep -c alice; grep -c alice /proc/1/environ; true",
	           "0\n0\n");
	P->ops.close(c);

	/* describe: owner, creation and expiry, also on a cached connect. */
	describe_id(inst, a, &info);
	cr_assert_str_eq(info.owner, "alice@example.com");
	cr_assert(info.created_s >= t0 - 5 && info.created_s <= t0 + 60,
	          "created_s %lld, t0 %lld", (long long)info.created_s,
	          (long long)t0);
	cr_assert(info.expires_s >= t0 + 600 && info.expires_s <= t0 + 660,
	          "expires_s %lld", (long long)info.expires_s);
	describe_id(inst, a, &info);
	cr_assert_str_eq(info.owner, "alice@example.com");
	describe_id(inst, b, &info);
	cr_assert_str_eq(info.owner, "bob smith");
	cr_assert(info.expires_s >= t0 + 900 && info.expires_s <= t0 + 960);
	describe_id(inst, n, &info);
	cr_assert_str_eq(info.owner, "");
	cr_assert(info.expires_s >= t0 + 3600 && info.expires_s <= t0 + 3660);
	describe_id(inst, e, &info);
	cr_assert_str_eq(info.owner, "k=v=w");

	/* renew moves the expiry describe and list report. */
	c = attach(inst, b);
	cr_assert_eq(P->ops.renew(c, 7200, err, sizeof(err)), TASKBOX_OK, "%s",
	             err);
	memset(&info, 0, sizeof(info));
	info.struct_size = sizeof(info);
	cr_assert_eq(P->describe(c, &info, err, sizeof(err)), TASKBOX_OK);
	cr_assert(info.expires_s >= t0 + 7200 && info.expires_s <= t0 + 7260,
	          "after renew: %lld", (long long)info.expires_s);
	P->ops.close(c);
	describe_id(inst, b, &info);
	cr_assert(info.expires_s >= t0 + 7200, "cached: %lld",
	          (long long)info.expires_s);

	/* list(owner): that owner's only, exactly. */
	list_owner("alice@example.com", &s, 0);
	cr_assert_eq(s.n, 1, "alice sees %d", s.n);
	cr_assert_str_eq(s.ids[0], a);
	cr_assert_str_eq(s.owners[0], "alice@example.com");
	cr_assert(s.created[0] >= t0 - 5 && s.created[0] <= t0 + 60);
	cr_assert(s.expires[0] >= t0 + 600 && s.expires[0] <= t0 + 660);
	list_owner("bob smith", &s, 0);
	cr_assert_eq(s.n, 1);
	cr_assert_str_eq(s.ids[0], b);
	cr_assert(s.expires[0] >= t0 + 7200, "list after renew: %lld",
	          (long long)s.expires[0]);
	list_owner("k=v=w", &s, 0);
	cr_assert_eq(s.n, 1);
	cr_assert_str_eq(s.ids[0], e);
	list_owner("k=v", &s, 0);
	cr_assert_eq(s.n, 0);
	list_owner("alice", &s, 0);
	cr_assert_eq(s.n, 0);
	list_owner("", &s, 0);
	cr_assert_geq(seen_at(&s, n), 0);
	cr_assert_lt(seen_at(&s, a), 0);

	/* list(NULL): every sandbox (others may exist), each as described. */
	list_owner(NULL, &s, 0);
	cr_assert_geq(s.n, 4);
	cr_assert_str_eq(s.owners[seen_at(&s, a)], "alice@example.com");
	cr_assert_str_eq(s.owners[seen_at(&s, b)], "bob smith");
	cr_assert_str_eq(s.owners[seen_at(&s, n)], "");
	cr_assert_str_eq(s.owners[seen_at(&s, e)], "k=v=w");
	/* each asking to stop ends the listing. */
	list_owner(NULL, &s, 1);
	cr_assert_eq(s.n, 1);

	/* Destroyed: no longer listed. */
	cr_assert_eq(P->ops.destroy(inst, a, err, sizeof(err)), TASKBOX_OK);
	list_owner("alice@example.com", &s, 0);
	cr_assert_eq(s.n, 0);
	list_owner(NULL, &s, 0);
	cr_assert_lt(seen_at(&s, a), 0);
	cr_assert_geq(seen_at(&s, b), 0);
	P->ops.destroy(inst, b, err, sizeof(err));
	P->ops.destroy(inst, n, err, sizeof(err));
	P->ops.destroy(inst, e, err, sizeof(err));
}

Test(docker, owner_rules_old_hosts_and_foreign_containers)
{
	char id[TASKBOX_SANDBOX_ID_MAX], big[300], cmd[4096];
	struct taskbox_create_req req = {sizeof(req), NULL, 0, "bad\nowner"};
	struct taskbox_sandbox_info info;
	const char *foreign;
	struct seen s;

	/* An owner create cannot store is refused, naming the rule. */
	cr_assert_eq(P->ops.create(inst, &req, id, err, sizeof(err)),
	             TASKBOX_E_INVALID);
	cr_assert(strstr(err, "owner"), "%s", err);
	memset(big, 'x', 256);
	big[256] = '\0';
	req.owner = big;
	cr_assert_eq(P->ops.create(inst, &req, id, err, sizeof(err)),
	             TASKBOX_E_INVALID);
	req.owner = "\xc3\x28";
	cr_assert_eq(P->ops.create(inst, &req, id, err, sizeof(err)),
	             TASKBOX_E_INVALID);
	big[255] = '\0';
	make_owned(inst, id, 0, big);
	describe_id(inst, id, &info);
	cr_assert_str_eq(info.owner, big);
	P->ops.destroy(inst, id, err, sizeof(err));

	/* A host of ABI 1.4 has no owner field: none is read. */
	req.struct_size = offsetof(struct taskbox_create_req, owner);
	req.owner = "mallory";
	cr_assert_eq(P->ops.create(inst, &req, id, err, sizeof(err)),
	             TASKBOX_OK, "%s", err);
	describe_id(inst, id, &info);
	cr_assert_str_eq(info.owner, "");
	P->ops.destroy(inst, id, err, sizeof(err));

	/* A container carrying the principal label but not made by taskbox
	 * is never listed. */
	snprintf(cmd, sizeof(cmd),
	         "curl -sf --unix-socket '%s' -H 'Content-Type: "
	         "application/json' -d '{\"Image\":\"%s\",\"Cmd\":[\"sleep\","
	         "\"600\"],\"Labels\":{\"org.taskbox.principal\":"
	         "\"mallory\"}}' http://localhost/containers/create | "
	         "python3 -c 'import json,sys; print(json.load(sys.stdin)"
	         "[\"Id\"])'",
	         env_or_die("DOCKER_HOST") + 7,
	         env_or_die("TASKBOX_DOCKER_IMAGE"));
	foreign = shell_line(cmd);
	cr_assert_eq(strlen(foreign), 64, "%s", foreign);
	snprintf(id, sizeof(id), "%s", foreign);
	snprintf(cmd, sizeof(cmd), "/containers/%s/start", id);
	engine_request("POST", cmd);
	list_owner("mallory", &s, 0);
	cr_assert_eq(s.n, 0);
	list_owner(NULL, &s, 0);
	cr_assert_lt(seen_at(&s, id), 0);
	snprintf(cmd, sizeof(cmd), "/containers/%s?force=true", id);
	engine_request("DELETE", cmd);
}
