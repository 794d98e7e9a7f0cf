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
#include "supervisor/supervisor_source.h"

#define NATIVE_NAME "taskbox-supervisor"
/* Instances whose sandboxes cannot see the native binary. */
#define UNUSABLE_MAX 64

static char native_path[PATH_MAX];
static pthread_once_t native_once = PTHREAD_ONCE_INIT;
static const struct tb_instance *unusable[UNUSABLE_MAX];
static size_t n_unusable;
static pthread_mutex_t unusable_lock = PTHREAD_MUTEX_INITIALIZER;

/* Keeps PATH (DIR_LEN bytes of a directory, then NAME) when it is an
 * absolute path to an executable. */
static int try_path(const char *dir, size_t dir_len, const char *name)
{
	int n = snprintf(native_path, sizeof(native_path), "%.*s%s%s",
	                 (int)dir_len, dir, name ? "/" : "", name ? name : "");

	if (n > 0 && (size_t)n < sizeof(native_path) && native_path[0] == '/' &&
	    access(native_path, X_OK) == 0)
		return 1;
	native_path[0] = '\0';
	return 0;
}

static void find_native(void)
{
	const char *env = getenv("TASKBOX_SUPERVISOR");
	char exe[PATH_MAX];
	const char *slash;
	ssize_t n;

	if (env && *env) {
		if (strcmp(env, "python3") == 0 ||
		    try_path(env, strlen(env), NULL))
			goto out;
		tb_log(
		    TB_LOG_WARN,
		    "TASKBOX_SUPERVISOR=%.200s is not an absolute path to an "
		    "executable; tasks use the python3 supervisor",
		    env);
		goto out;
	}
	/* A build directory's taskbox finds the build's supervisor. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash && try_path(exe, (size_t)(slash - exe), NATIVE_NAME))
			goto out;
	}
	try_path(TB_PKGLIBEXECDIR, strlen(TB_PKGLIBEXECDIR), NATIVE_NAME);
out:
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

size_t tb_sup_prefix(const struct tb_box *box, const char **argv, int *native)
{
	*native =
	    tb_sup_native_for(box->inst->plugin) && !marked_unusable(box->inst);
	if (*native) {
		argv[0] = native_path;
		return 1;
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
