/* The local provider: sandboxes are directories on this machine and commands
 * run as the current user. This file holds the descriptor, the settings and
 * the instance's life.
 *
 * Confinement, honestly: with isolation "none" a sandbox is a working
 * directory and nothing more; its commands can read and write whatever the
 * user can. With isolation "bwrap" every command runs under bubblewrap with
 * the whole file system read-only except the sandbox directory (and the
 * sandbox's own tmp/ mounted on /tmp), and a private IPC namespace. The PID
 * namespace is deliberately shared: a task's supervisor must outlive the
 * exec that starts it (a private PID namespace dies with its first process)
 * and the host checks it through /proc. So even under bwrap commands see and
 * may signal the user's other processes: this is a guard against mistakes,
 * not a security boundary.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "../common/settings.h"
#include "local_int.h"

#define DEFAULT_LIFETIME 3600u
#define DEFAULT_MAX_LIFETIME 86400u
#define KNOWN_SETTINGS                                                         \
	"root, env, isolation, default_lifetime, max_lifetime, cgroup"

void tb_local_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

int tb_local_errno_status(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return TASKBOX_E_NOT_FOUND;
	case EACCES:
	case EPERM:
	case EROFS:
		return TASKBOX_E_PERMISSION;
	case ENOMEM:
		return TASKBOX_E_NOMEM;
	case EINVAL:
	case ENAMETOOLONG:
	case EISDIR:
	case ELOOP:
		return TASKBOX_E_INVALID;
	default:
		return TASKBOX_E_IO;
	}
}

uint32_t tb_local_lifetime(const struct tb_local *L, uint32_t req)
{
	uint32_t s = req ? req : L->default_lifetime;

	return s > L->max_lifetime ? L->max_lifetime : s;
}

/* Creates every missing directory of the absolute path p with mode 0700. */
static int mkdir_p(const char *p)
{
	char *buf = strdup(p);
	int rc = 0;

	if (!buf)
		return ENOMEM;
	for (char *s = buf + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char saved = *s;
		*s = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
			rc = errno;
			break;
		}
		*s = saved;
		if (saved == '\0')
			break;
	}
	free(buf);
	return rc;
}

/* The default root: $XDG_STATE_HOME/taskbox/local, else
 * ~/.local/state/taskbox/local. Returns a malloc'ed path or NULL. */
static char *default_root(void)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char *out = NULL;
	struct passwd pw, *pwp = NULL;
	char pwbuf[4096];

	if (xdg && xdg[0] == '/') {
		if (asprintf(&out, "%s/taskbox/local", xdg) < 0)
			return NULL;
		return out;
	}
	if (!home || home[0] != '/') {
		if (getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &pwp) !=
		        0 ||
		    !pwp || !pw.pw_dir || pw.pw_dir[0] != '/')
			return NULL;
		home = pw.pw_dir;
	}
	if (asprintf(&out, "%s/.local/state/taskbox/local", home) < 0)
		return NULL;
	return out;
}

/* Appends a "NAME=value" entry to the instance's env array. */
static int env_add(void *ctx, char *entry)
{
	char **e = ctx;

	while (*e)
		e++;
	*e = entry;
	return TASKBOX_OK;
}

static int parse_env(struct tb_local *L, json_t *obj, char *errbuf,
                     size_t errlen)
{
	/* Room for every entry and the NULL that ends the array. */
	L->env = calloc(json_object_size(obj) + 1, sizeof(char *));
	if (!L->env) {
		tb_local_err(errbuf, errlen, "out of memory");
		return TASKBOX_E_NOMEM;
	}
	return tb_settings_env(obj, TB_LOCAL_MARKER, env_add, L->env, errbuf,
	                       errlen);
}

/* Reads a lifetime setting: an integer number of seconds, 1..2^32-1. */
static int parse_seconds(const char *key, json_t *val, uint32_t *out,
                         char *errbuf, size_t errlen)
{
	if (!json_is_integer(val) || json_integer_value(val) < 1 ||
	    json_integer_value(val) > (json_int_t)UINT32_MAX) {
		tb_local_err(
		    errbuf, errlen,
		    "setting '%s' must be an integer number of seconds "
		    "from 1 to %u",
		    key, UINT32_MAX);
		return TASKBOX_E_INVALID;
	}
	*out = (uint32_t)json_integer_value(val);
	return TASKBOX_OK;
}

/* The 'cgroup' setting: "auto", "off" or an absolute path; *out borrows
 * the string (valid while obj lives). */
static int parse_cgroup(json_t *val, const char **out, char *errbuf,
                        size_t errlen)
{
	const char *s = json_string_value(val);

	if (!s || strlen(s) != json_string_length(val) ||
	    (strcmp(s, "auto") && strcmp(s, "off") && s[0] != '/')) {
		tb_local_err(errbuf, errlen,
		             "setting 'cgroup' must be \"auto\", \"off\" or "
		             "the absolute path of a cgroup v2 directory");
		return TASKBOX_E_INVALID;
	}
	*out = s;
	return TASKBOX_OK;
}

static int parse_settings(struct tb_local *L, json_t *obj, const char **cg,
                          char *errbuf, size_t errlen)
{
	const char *key;
	json_t *val;
	int have_default = 0, rc;

	json_object_foreach(obj, key, val)
	{
		if (!strcmp(key, "root")) {
			const char *s = json_string_value(val);
			if (!s || s[0] != '/' ||
			    strlen(s) != json_string_length(val)) {
				tb_local_err(
				    errbuf, errlen,
				    "setting 'root' must be an absolute "
				    "directory path");
				return TASKBOX_E_INVALID;
			}
			L->root = strdup(s);
			if (!L->root)
				goto nomem;
		} else if (!strcmp(key, "env")) {
			if ((rc = parse_env(L, val, errbuf, errlen)))
				return rc;
		} else if (!strcmp(key, "isolation")) {
			const char *s = json_string_value(val);
			if (!s || (strcmp(s, "none") && strcmp(s, "bwrap"))) {
				tb_local_err(errbuf, errlen,
				             "setting 'isolation' must be "
				             "\"none\" or \"bwrap\"");
				return TASKBOX_E_INVALID;
			}
			L->bwrap = !strcmp(s, "bwrap");
		} else if (!strcmp(key, "default_lifetime")) {
			if ((rc = parse_seconds(key, val, &L->default_lifetime,
			                        errbuf, errlen)))
				return rc;
			have_default = 1;
		} else if (!strcmp(key, "cgroup")) {
			if ((rc = parse_cgroup(val, cg, errbuf, errlen)))
				return rc;
		} else if (!strcmp(key, "max_lifetime")) {
			if ((rc = parse_seconds(key, val, &L->max_lifetime,
			                        errbuf, errlen)))
				return rc;
		} else {
			tb_local_err(errbuf, errlen,
			             "unknown setting '%.64s' (known: %s)", key,
			             KNOWN_SETTINGS);
			return TASKBOX_E_INVALID;
		}
	}
	if (!have_default && L->default_lifetime > L->max_lifetime)
		L->default_lifetime = L->max_lifetime;
	if (L->default_lifetime > L->max_lifetime) {
		tb_local_err(errbuf, errlen,
		             "setting 'default_lifetime' (%u) exceeds "
		             "'max_lifetime' (%u)",
		             L->default_lifetime, L->max_lifetime);
		return TASKBOX_E_INVALID;
	}
	return TASKBOX_OK;
nomem:
	tb_local_err(errbuf, errlen, "out of memory");
	return TASKBOX_E_NOMEM;
}

/* Finds bwrap and checks that it can run a command with the flags exec
 * uses, on the root directory. */
static int probe_bwrap(struct tb_local *L, char *errbuf, size_t errlen)
{
	const char *path = getenv("PATH");
	int st;

	L->bwrap_path = tb_local_which("bwrap", path ? path : "/usr/bin:/bin");
	if (!L->bwrap_path) {
		tb_local_err(errbuf, errlen,
		             "setting 'isolation' is \"bwrap\" but bwrap was "
		             "not found in PATH (install bubblewrap or use "
		             "\"none\")");
		return TASKBOX_E_UNAVAILABLE;
	}
	char *argv[] = {L->bwrap_path,
	                "--ro-bind",
	                "/",
	                "/",
	                "--dev",
	                "/dev",
	                "--bind",
	                L->root,
	                L->root,
	                "--unshare-ipc",
	                "--die-with-parent",
	                "--",
	                "/bin/true",
	                NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	st = tb_local_run_quiet(L->bwrap_path, argv, envp, 0);
	if (st != 0) {
		tb_local_err(errbuf, errlen,
		             "setting 'isolation' is \"bwrap\" but %s failed a "
		             "probe (%s %d); bubblewrap cannot run here, use "
		             "\"none\"",
		             L->bwrap_path, st < 0 ? "error" : "wait status",
		             st < 0 ? -st : st);
		return TASKBOX_E_UNAVAILABLE;
	}
	return TASKBOX_OK;
}

static void local_fini(void *instance)
{
	struct tb_local *L = instance;

	if (!L)
		return;
	tb_local_idle_drop(L, NULL);
	pthread_mutex_destroy(&L->idle.lock);
	if (L->env)
		for (char **e = L->env; *e; e++)
			free(*e);
	free(L->env);
	if (L->root_fd >= 0)
		close(L->root_fd);
	free(L->root);
	free(L->bwrap_path);
	free(L->cg_parent);
	free(L);
}

static int local_init(const struct taskbox_host *host,
                      const char *settings_json, void **instance, char *errbuf,
                      size_t errlen)
{
	struct tb_local *L = calloc(1, sizeof(*L));
	json_error_t jerr;
	json_t *obj = NULL;
	const char *cg = NULL;
	int rc, err;

	if (!L) {
		tb_local_err(errbuf, errlen, "out of memory");
		return TASKBOX_E_NOMEM;
	}
	L->host = host;
	L->root_fd = -1;
	tb_local_idle_init(&L->idle);
	L->kept_cap = tb_local_kept_cap();
	L->default_lifetime = DEFAULT_LIFETIME;
	L->max_lifetime = DEFAULT_MAX_LIFETIME;
	/* For tests only: the path walk that stands in for openat2. */
	L->no_openat2 = getenv("TASKBOX_LOCAL_TEST_NO_OPENAT2") != NULL;
	obj = json_loads(settings_json ? settings_json : "{}",
	                 JSON_REJECT_DUPLICATES, &jerr);
	if (!obj || !json_is_object(obj)) {
		tb_local_err(errbuf, errlen,
		             "settings must be a JSON object%s%s",
		             obj ? "" : ": ", obj ? "" : jerr.text);
		rc = TASKBOX_E_INVALID;
		goto fail;
	}
	if ((rc = parse_settings(L, obj, &cg, errbuf, errlen)))
		goto fail;
	if (!L->env && !(L->env = calloc(1, sizeof(char *))))
		goto nomem;
	if (!L->root && !(L->root = default_root())) {
		tb_local_err(errbuf, errlen,
		             "cannot tell the default root: set 'root', "
		             "XDG_STATE_HOME or HOME");
		rc = TASKBOX_E_INVALID;
		goto fail;
	}
	for (size_t n = strlen(L->root); n > 1 && L->root[n - 1] == '/'; n--)
		L->root[n - 1] = '\0';
	if ((err = mkdir_p(L->root)) != 0 ||
	    (L->root_fd = open(L->root, O_PATH | O_DIRECTORY | O_CLOEXEC)) <
	        0) {
		err = err ? err : errno;
		tb_local_err(errbuf, errlen,
		             "setting 'root': cannot use %s: %s", L->root,
		             strerror(err));
		rc = tb_local_errno_status(err);
		goto fail;
	}
	if (L->bwrap && (rc = probe_bwrap(L, errbuf, errlen)))
		goto fail;
	if ((rc = tb_local_cgroup_init(L, cg, errbuf, errlen)))
		goto fail;
	json_decref(obj);
	tb_local_sweep(L);
	*instance = L;
	return TASKBOX_OK;
nomem:
	tb_local_err(errbuf, errlen, "out of memory");
	rc = TASKBOX_E_NOMEM;
fail:
	json_decref(obj);
	local_fini(L);
	return rc;
}

static const struct taskbox_provider tb_local_provider = {
    .abi_major = TASKBOX_ABI_MAJOR,
    .abi_minor = TASKBOX_ABI_MINOR,
    .struct_size = sizeof(struct taskbox_provider),
    .name = TB_LOCAL_NAME,
    .version = PACKAGE_VERSION,
    .description = "sandboxes as directories on this machine, optionally "
                   "under bubblewrap",
    .ops =
        {
            .init = local_init,
            .fini = local_fini,
            .create = tb_local_create,
            .connect = tb_local_connect,
            .close = tb_local_close,
            .exec = tb_local_exec,
            .read_file = tb_local_read_file,
            .destroy = tb_local_destroy,
            .write_file = tb_local_write_file,
            .renew = tb_local_renew,
        },
    .describe = tb_local_describe,
    .list = tb_local_list,
    .features = TASKBOX_FEATURE_HOST_EXEC | TASKBOX_FEATURE_HOST_PIDS |
                TASKBOX_FEATURE_EXEC_STDIN,
};

TASKBOX_PROVIDER_DEFINE(tb_local_provider)
