/* Shared plumbing of the local provider's tests (see helper.h). */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ltdl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"

/* Under valgrind, judge this program, not the system's programs it runs
 * (sh, sleep, date, bwrap: some leak, and bwrap's namespaces do not run
 * under valgrind at all). Criterion re-executes this program for each
 * test, and each of those valgrind instances reads VALGRIND_OPTS. */
__attribute__((constructor)) static void skip_system_programs(void)
{
	const char *skip = "--trace-children-skip=/usr/*,/bin/*,/sbin/*";
	const char *old = getenv("VALGRIND_OPTS");
	char buf[1024];

	if (old && strstr(old, "--trace-children-skip"))
		return;
	snprintf(buf, sizeof buf, "%s%s%s", old ? old : "", old ? " " : "",
	         skip);
	setenv("VALGRIND_OPTS", buf, 1);
}

const struct taskbox_provider *tl_p;
char tl_root[256];
char tl_err[TASKBOX_ERRBUF_SIZE];
static lt_dlhandle module;

static void host_log(enum taskbox_log_level level, const char *provider,
                     const char *message)
{
	fprintf(stderr, "[%d] %s: %s\n", (int)level, provider, message);
}

const struct taskbox_host tl_host = {
    .abi_major = TASKBOX_ABI_MAJOR,
    .abi_minor = TASKBOX_ABI_MINOR,
    .struct_size = sizeof(struct taskbox_host),
    .alloc = malloc,
    .realloc = realloc,
    .free = free,
    .log = host_log,
};

/* Opens the local module from $TASKBOX_PLUGIN_PATH, else from the build
 * tree this test was compiled in. */
static lt_dlhandle open_module(void)
{
	const char *path = getenv("TASKBOX_PLUGIN_PATH");
	char *copy = strdup(path ? path : ""), *save = NULL;
	lt_dlhandle h = NULL;
	char file[1024];

	cr_assert_not_null(copy);
	for (char *dir = strtok_r(copy, ":", &save); dir && !h;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(file, sizeof file, "%s/local", dir);
		h = lt_dlopenext(file);
	}
	free(copy);
	if (!h)
		h = lt_dlopenext(TB_LOCAL_MODULE_DIR "/local");
	return h;
}

void tl_setup(void)
{
	taskbox_provider_entry_fn entry;

	cr_assert_eq(lt_dlinit(), 0);
	module = open_module();
	cr_assert_not_null(module, "cannot load the local module: %s",
	                   lt_dlerror());
	entry = (taskbox_provider_entry_fn)(uintptr_t)lt_dlsym(
	    module, TASKBOX_PROVIDER_ENTRY_NAME);
	cr_assert_not_null(entry);
	tl_p = entry();
	cr_assert_str_eq(tl_p->name, "local");
	snprintf(tl_root, sizeof tl_root, "/tmp/tb-local-test-XXXXXX");
	cr_assert_not_null(mkdtemp(tl_root));
}

static void rm_rf(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[1024];

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		struct stat st;
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			rm_rf(sub);
		else
			unlink(sub);
	}
	closedir(d);
	rmdir(path);
}

void tl_teardown(void)
{
	void *inst = NULL;
	DIR *d;
	struct dirent *e;

	/* Destroy whatever a test left, which also stops its reaper. */
	if (tl_p && tl_init("{\"root\":\"%s\"}", &inst) == TASKBOX_OK) {
		if ((d = opendir(tl_root))) {
			while ((e = readdir(d)))
				if (strlen(e->d_name) == 32)
					tl_p->ops.destroy(inst, e->d_name,
					                  tl_err,
					                  sizeof tl_err);
			closedir(d);
		}
		tl_p->ops.fini(inst);
	}
	if (tl_root[0])
		rm_rf(tl_root);
	if (module)
		lt_dlclose(module);
	lt_dlexit();
}

int tl_init(const char *settings_fmt, void **inst)
{
	char settings[2048];

	snprintf(settings, sizeof settings, settings_fmt, tl_root);
	tl_err[0] = '\0';
	return tl_p->ops.init(&tl_host, settings, inst, tl_err, sizeof tl_err);
}

void *tl_init_ok(void)
{
	void *inst = NULL;
	int rc = tl_init("{\"root\":\"%s\"}", &inst);

	cr_assert_eq(rc, TASKBOX_OK, "init: %d %s", rc, tl_err);
	return inst;
}

void *tl_bwrap_init_ok(void)
{
	void *inst = NULL;
	int rc;

	if (access("/usr/bin/bwrap", X_OK) != 0 && access("/bin/bwrap", X_OK))
		cr_skip_test("bubblewrap is not installed");
	rc = tl_init("{\"root\":\"%s\",\"isolation\":\"bwrap\"}", &inst);
	if (rc == TASKBOX_E_UNAVAILABLE)
		cr_skip_test("bubblewrap cannot run here: %s", tl_err);
	cr_assert_eq(rc, TASKBOX_OK, "%s", tl_err);
	return inst;
}

/* Nonzero when a child of process parent runs sleep. */
static int sleeping_child(long parent)
{
	char path[300], buf[256];
	DIR *d = opendir("/proc");
	struct dirent *e;
	long ppid;
	int found = 0;
	FILE *f;

	cr_assert_not_null(d);
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof buf, f) && strstr(buf, " (sleep) ") &&
		    sscanf(strrchr(buf, ')') + 1, " %*c %ld", &ppid) == 1)
			found = ppid == parent;
		fclose(f);
	}
	closedir(d);
	return found;
}

/* Waits until sandbox id's reaper has read its deadline and sleeps: a
 * deadline a test moves into the past from then on is the host's to find,
 * not a reaper's that started late and read it first. */
static void wait_reaper_asleep(const char *id)
{
	char path[512];
	long group, loop;
	FILE *f;
	int i;

	snprintf(path, sizeof path, "%s/%s/reaper.pid", tl_root, id);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fscanf(f, "%ld %ld", &group, &loop), 2);
	fclose(f);
	for (i = 0; i < 400 && !sleeping_child(loop); i++)
		usleep(25000);
	cr_assert_lt(i, 400, "the reaper of %s never slept", id);
}

void tl_create_owned(void *inst, uint32_t lifetime_s, const char *owner,
                     char id[TASKBOX_SANDBOX_ID_MAX])
{
	struct taskbox_create_req req = {sizeof req, NULL, lifetime_s, owner};
	int rc = tl_p->ops.create(inst, &req, id, tl_err, sizeof tl_err);

	cr_assert_eq(rc, TASKBOX_OK, "create: %d %s", rc, tl_err);
	wait_reaper_asleep(id);
}

void tl_create(void *inst, uint32_t lifetime_s, char id[TASKBOX_SANDBOX_ID_MAX])
{
	tl_create_owned(inst, lifetime_s, NULL, id);
}

void *tl_connect(void *inst, const char *id)
{
	void *conn = NULL;
	int rc = tl_p->ops.connect(inst, id, &conn, tl_err, sizeof tl_err);

	cr_assert_eq(rc, TASKBOX_OK, "connect: %d %s", rc, tl_err);
	return conn;
}

int tl_exec(void *conn, struct taskbox_exec_result *res, uint32_t timeout_ms,
            size_t limit, const char *const *env, const char *cwd,
            const char *argv0, ...)
{
	const char *argv[32];
	size_t n = 0;
	va_list ap;

	argv[n++] = argv0;
	va_start(ap, argv0);
	while (n < 31 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	struct taskbox_exec_req req = {
	    .struct_size = sizeof req,
	    .argv = argv,
	    .env = env,
	    .cwd = cwd,
	    .timeout_ms = timeout_ms,
	    .output_limit = limit,
	};
	memset(res, 0, sizeof *res);
	res->struct_size = sizeof *res;
	tl_err[0] = '\0';
	return tl_p->ops.exec(conn, &req, res, tl_err, sizeof tl_err);
}

void tl_sh(void *conn, struct taskbox_exec_result *res, const char *script)
{
	int rc =
	    tl_exec(conn, res, 20000, 0, NULL, NULL, "sh", "-c", script, NULL);

	cr_assert_eq(rc, TASKBOX_OK, "exec %s: %d %s", script, rc, tl_err);
}

void tl_res_free(struct taskbox_exec_result *res)
{
	free(res->out.data);
	free(res->err.data);
	res->out.data = res->err.data = NULL;
}

long tl_out_long(const struct taskbox_exec_result *res)
{
	char buf[32];
	long v;

	cr_assert(res->out.len > 0 && res->out.len < sizeof buf,
	          "stdout has %zu bytes", res->out.len);
	memcpy(buf, res->out.data, res->out.len);
	buf[res->out.len] = '\0';
	cr_assert_eq(sscanf(buf, "%ld", &v), 1, "stdout: %s", buf);
	return v;
}

int tl_pid_alive(long pid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	int alive = 0;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "r")))
		return 0;
	if (fgets(buf, sizeof buf, f) && (rp = strrchr(buf, ')')))
		alive = rp[2] != 'Z' && rp[2] != 'X';
	fclose(f);
	return alive;
}

int tl_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int64_t tl_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int tl_wait_gone(const char *path, int ms)
{
	int64_t end = tl_now_ms() + ms;

	while (tl_exists(path)) {
		if (tl_now_ms() > end)
			return 0;
		usleep(50000);
	}
	return 1;
}

void tl_set_deadline(const char *id, int64_t deadline)
{
	char path[512], tmp[520];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s/meta.json", tl_root, id);
	snprintf(tmp, sizeof tmp, "%s.t", path);
	f = fopen(tmp, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "{\"format\":1,\"created\":%lld,\"deadline\":%lld,"
	        "\"template\":\"base\"}\n",
	        (long long)deadline - 10, (long long)deadline);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rename(tmp, path), 0);
}

int tl_under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

int tl_open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}
