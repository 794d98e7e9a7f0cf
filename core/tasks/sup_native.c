/* The choice between the native and the python3 supervisor. */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "host/registry.h"
#include "tasks/sup_native.h"
#include "tasks/sup_upload.h"
#include "supervisor/supervisor_source.h"

#define NATIVE_NAME "taskbox-supervisor"
/* Instances whose sandboxes cannot see the native binary. */
#define UNUSABLE_MAX 64

static char native_path[PATH_MAX];
static pthread_once_t native_once = PTHREAD_ONCE_INIT;
static const struct tb_instance *unusable[UNUSABLE_MAX];
static size_t n_unusable;
static pthread_mutex_t unusable_lock = PTHREAD_MUTEX_INITIALIZER;

/* Writes DIR_LEN bytes of DIR, then /NAME (when NAME), into out and keeps
 * it when it is an absolute path to an executable; else empties out. */
static int try_path(char *out, size_t outlen, const char *dir, size_t dir_len,
                    const char *name)
{
	int n = snprintf(out, outlen, "%.*s%s%s", (int)dir_len, dir,
	                 name ? "/" : "", name ? name : "");

	if (n > 0 && (size_t)n < outlen && out[0] == '/' &&
	    access(out, X_OK) == 0)
		return 1;
	out[0] = '\0';
	return 0;
}

int tb_sup_find_program(const char *name, char *out, size_t outlen)
{
	char exe[PATH_MAX];
	const char *slash;
	ssize_t n;

	/* A build directory's taskbox finds the build's programs. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash &&
		    try_path(out, outlen, exe, (size_t)(slash - exe), name))
			return 1;
	}
	return try_path(out, outlen, TB_PKGLIBEXECDIR, strlen(TB_PKGLIBEXECDIR),
	                name);
}

int tb_sup_env_program(const char *var, char *out, size_t outlen)
{
	const char *env = getenv(var);

	if (try_path(out, outlen, env, strlen(env), NULL))
		return 1;
	tb_log(TB_LOG_WARN,
	       "%s=%.200s is not an absolute path to an executable", var, env);
	return 0;
}

static void find_native(void)
{
	const char *env = getenv("TASKBOX_SUPERVISOR");

	if (env && *env) {
		if (strcmp(env, "python3") != 0 &&
		    !tb_sup_env_program("TASKBOX_SUPERVISOR", native_path,
		                        sizeof(native_path)))
			tb_log(TB_LOG_WARN, "tasks use the python3 supervisor");
	} else {
		tb_sup_find_program(NATIVE_NAME, native_path,
		                    sizeof(native_path));
	}
	tb_log(TB_LOG_DEBUG, "native supervisor: %s",
	       native_path[0] ? native_path : "none, python3 only");
}

const char *tb_sup_native_path(void)
{
	pthread_once(&native_once, find_native);
	return native_path[0] ? native_path : NULL;
}

int tb_sup_native_for(const struct taskbox_provider *desc)
{
	return (desc->features & TASKBOX_FEATURE_HOST_EXEC) &&
	       tb_sup_native_path() != NULL;
}

static int marked_unusable(const struct tb_instance *inst)
{
	int found = 0;

	pthread_mutex_lock(&unusable_lock);
	for (size_t i = 0; i < n_unusable && !found; i++)
		found = unusable[i] == inst;
	pthread_mutex_unlock(&unusable_lock);
	return found;
}

/* Logged once: an instance asks for the static supervisor that this
 * installation does not have. */
static void warn_no_static(void)
{
	tb_log(TB_LOG_WARN, "\"supervisor\": \"static\": this taskbox has no "
	                    "static supervisor (taskbox-supervisor-static is "
	                    "built where libc's static archive links); tasks "
	                    "use the python3 supervisor");
}

enum tb_sup_kind tb_sup_choose(struct tb_box *box)
{
	static pthread_once_t warned = PTHREAD_ONCE_INIT;
	enum tb_sup_mode mode = box->inst->supervisor;

	if (mode == TB_SUP_MODE_PYTHON3)
		return TB_SUP_PYTHON;
	if (box->inst->plugin->features & TASKBOX_FEATURE_HOST_EXEC) {
		/* This host's commands: its native binary, or python3. */
		if (tb_sup_native_for(box->inst->plugin) &&
		    !marked_unusable(box->inst))
			return TB_SUP_HOST_NATIVE;
	} else if (mode == TB_SUP_MODE_AUTO && tb_sup_static_runs(box)) {
		return TB_SUP_STATIC;
	}
	if (mode == TB_SUP_MODE_STATIC || tb_sup_pythonless(box)) {
		if (tb_sup_static_sandbox_path() != NULL)
			return TB_SUP_STATIC;
		if (mode == TB_SUP_MODE_STATIC)
			pthread_once(&warned, warn_no_static);
	}
	return TB_SUP_PYTHON;
}

size_t tb_sup_prefix(enum tb_sup_kind kind, const char **argv)
{
	switch (kind) {
	case TB_SUP_HOST_NATIVE:
		argv[0] = tb_sup_native_path();
		return 1;
	case TB_SUP_STATIC:
		argv[0] = tb_sup_static_sandbox_path();
		return 1;
	case TB_SUP_PYTHON:
		break;
	}
	/* -S: the supervisor needs nothing from site-packages. */
	argv[0] = "python3";
	argv[1] = "-I";
	argv[2] = "-S";
	argv[3] = "-c";
	argv[4] = tb_supervisor_source;
	return 5;
}

void tb_sup_native_unusable(const struct tb_box *box, int exit_code)
{
	pthread_mutex_lock(&unusable_lock);
	if (n_unusable < UNUSABLE_MAX)
		unusable[n_unusable++] = box->inst;
	pthread_mutex_unlock(&unusable_lock);
	tb_log(TB_LOG_INFO,
	       "instance %s: %s could not run in the sandbox (exit %d; not "
	       "visible there?); its tasks use the python3 supervisor",
	       box->inst->name, native_path, exit_code);
}
