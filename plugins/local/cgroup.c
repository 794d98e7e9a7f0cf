/* A cgroup v2 group per sandbox, where the machine lets us make one.
 *
 * At init the instance picks a parent group: the "cgroup" setting's path,
 * or by default the server's own group (from /proc/self/cgroup, on the
 * first cgroup2 mount of /proc/self/mountinfo). It is usable when a probe
 * group can be made in it and its cgroup.procs is writable; otherwise the
 * instance runs without groups and destroy falls back to the process tree
 * (proctree.c). create makes <parent>/taskbox-<id> and records its path in
 * <root>/.cgroup-<id>, outside the sandbox directory, so no command of the
 * sandbox (bubblewrap binds only that directory) can rewrite it. exec makes
 * each command in the group (clone3), or moves it there before it runs
 * anything (forkexec.c); a process cannot leave the group unless it may write
 * the cgroup.procs of another group (under bubblewrap /sys is read-only).
 * destroy and the reaper write cgroup.kill (Linux 5.14), or KILL each pid of
 * cgroup.procs, until the group is empty, then remove it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "local_int.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#define RECORD_MAX 4096
#define KILL_GIVE_UP_MS 5000

/* The mount point of the first cgroup2 file system in mountinfo, or NULL.
 * Mount points there escape space, tab, newline and backslash as \ooo. */
static char *cgroup2_mount(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *out = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	while (!out && getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - "), *mp, *p;
		int field = 0;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		/* The fifth field is the mount point. */
		for (p = line; field < 4 && (p = strchr(p, ' ')); field++)
			p++;
		if (!p || !(mp = strndup(p, strcspn(p, " "))))
			continue;
		char *o = mp;
		for (char *s = mp; *s; s++) {
			if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
			    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
			    s[3] <= '7') {
				*o++ = (char)((s[1] - '0') * 64 +
				              (s[2] - '0') * 8 + (s[3] - '0'));
				s += 3;
			} else {
				*o++ = *s;
			}
		}
		*o = '\0';
		out = mp;
	}
	free(line);
	fclose(f);
	return out;
}

/* The server's own group as a path: mount point + the "0::" entry of
 * /proc/self/cgroup. Returns a malloc'ed path or NULL. */
static char *own_group(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char *line = NULL, *mount, *out = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, "0::/", 4))
			continue;
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if ((mount = cgroup2_mount())) {
			/* "/" is the mount itself. */
			if (asprintf(&out, "%s%s", mount,
			             line[4] ? line + 3 : "") < 0)
				out = NULL;
			free(mount);
		}
		break;
	}
	free(line);
	fclose(f);
	return out;
}

/* Nonzero when path is a directory of a cgroup2 file system. */
static int is_cgroup2(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 &&
	       (unsigned long)sf.f_type == (unsigned long)CGROUP2_SUPER_MAGIC;
}

/* Checks that groups can be made in parent and processes moved into them:
 * makes and removes a probe group. Returns 0 or an errno value. */
static int probe(const char *parent)
{
	char *path = NULL, *procs = NULL;
	int rc = 0;

	if (!is_cgroup2(parent))
		return ENOTSUP;
	if (asprintf(&path, "%s/taskbox-probe-%ld", parent, (long)getpid()) <
	        0 ||
	    asprintf(&procs, "%s/cgroup.procs", parent) < 0) {
		free(path);
		return ENOMEM;
	}
	if (access(procs, W_OK) != 0)
		rc = errno;
	else if (mkdir(path, 0755) != 0 && errno != EEXIST)
		rc = errno;
	else
		rmdir(path);
	free(path);
	free(procs);
	return rc;
}

/* Tests only: TASKBOX_LOCAL_TEST_SPAWN=fork or =clone3 forces how
 * commands enter their group (enum tb_local_spawn_how); unset or anything
 * else is the default, clone3 with the fork as its fallback. */
static int spawn_how(void)
{
	const char *v = getenv("TASKBOX_LOCAL_TEST_SPAWN");

	if (v && !strcmp(v, "fork"))
		return TB_LOCAL_SPAWN_FORK;
	if (v && !strcmp(v, "clone3"))
		return TB_LOCAL_SPAWN_CLONE3;
	return TB_LOCAL_SPAWN_AUTO;
}

int tb_local_cgroup_init(struct tb_local *L, const char *setting, char *errbuf,
                         size_t errlen)
{
	char *parent;
	int err;

	L->cg_parent = NULL;
	L->cg_spawn = spawn_how();
	if (setting && !strcmp(setting, "off"))
		return TASKBOX_OK;
	if (setting && strcmp(setting, "auto")) {
		/* An explicit parent must work. */
		if ((err = probe(setting))) {
			tb_local_err(errbuf, errlen,
			             "setting 'cgroup': cannot make groups "
			             "in %.200s: %s",
			             setting,
			             err == ENOTSUP
			                 ? "not a cgroup v2 directory"
			                 : strerror(err));
			return TASKBOX_E_UNAVAILABLE;
		}
		if (!(L->cg_parent = strdup(setting)))
			goto nomem;
		return TASKBOX_OK;
	}
	parent = own_group();
	if (parent && (err = probe(parent)) == 0) {
		L->cg_parent = parent;
		return TASKBOX_OK;
	}
	free(parent);
	return TASKBOX_OK; /* the process-tree fallback */
nomem:
	tb_local_err(errbuf, errlen, "out of memory");
	return TASKBOX_E_NOMEM;
}

/* The record's name below the root: ".cgroup-<id>". */
static void record_name(char out[TB_LOCAL_ID_LEN + 9], const char *id)
{
	snprintf(out, TB_LOCAL_ID_LEN + 9, ".cgroup-%s", id);
}

int tb_local_cgroup_create(struct tb_local *L, const char *id)
{
	char rec[TB_LOCAL_ID_LEN + 9], *path = NULL;
	int fd, rc = 0;
	size_t len;

	if (!L->cg_parent)
		return 0;
	if (asprintf(&path, "%s/taskbox-%s", L->cg_parent, id) < 0)
		return ENOMEM;
	if (mkdir(path, 0755) != 0) {
		rc = errno;
		free(path);
		return rc;
	}
	record_name(rec, id);
	fd =
	    openat(L->root_fd, rec,
	           O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	len = strlen(path);
	if (fd < 0 || write(fd, path, len) != (ssize_t)len)
		rc = errno ? errno : EIO;
	if (fd >= 0)
		close(fd);
	if (rc) {
		unlinkat(L->root_fd, rec, 0);
		rmdir(path);
	}
	free(path);
	return rc;
}

char *tb_local_cgroup_path(struct tb_local *L, const char *id)
{
	char rec[TB_LOCAL_ID_LEN + 9], buf[RECORD_MAX + 1], tail[48];
	ssize_t n;
	int fd;

	record_name(rec, id);
	fd = openat(L->root_fd, rec, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, RECORD_MAX);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	/* Only a group named after this sandbox, on cgroup2, no dot
	 * components: whatever the record says, nothing else is killed. */
	snprintf(tail, sizeof tail, "/taskbox-%s", id);
	if (buf[0] != '/' || strlen(buf) != (size_t)n ||
	    (size_t)n <= strlen(tail) || strcmp(buf + n - strlen(tail), tail) ||
	    strstr(buf, "/./") || strstr(buf, "/../") || !is_cgroup2(buf))
		return NULL;
	return strdup(buf);
}

int tb_local_cgroup_open(const char *group)
{
	return open(group, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Sends KILL to every pid listed in the group's cgroup.procs. */
static void kill_listed(const char *group)
{
	char path[RECORD_MAX + 16];
	FILE *f;
	long pid;

	snprintf(path, sizeof path, "%s/cgroup.procs", group);
	if (!(f = fopen(path, "re")))
		return;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 1 && pid != (long)getpid())
			kill((pid_t)pid, SIGKILL);
	fclose(f);
}

/* Kills every process of group and removes it. Returns 0, or EBUSY when
 * it could not be emptied in time. */
static int kill_group(const char *group)
{
	char path[RECORD_MAX + 16];
	struct timespec pause = {0, 20 * 1000000L};
	int fd, waited = 0;

	snprintf(path, sizeof path, "%s/cgroup.kill", group);
	for (;;) {
		if ((fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
			if (write(fd, "1", 1) != 1)
				kill_listed(group);
			close(fd);
		} else {
			kill_listed(group);
		}
		if (rmdir(group) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || waited >= KILL_GIVE_UP_MS)
			return errno == EBUSY ? EBUSY : errno;
		nanosleep(&pause, NULL);
		waited += 20;
	}
}

int tb_local_cgroup_remove(struct tb_local *L, const char *id)
{
	char rec[TB_LOCAL_ID_LEN + 9];
	char *group = tb_local_cgroup_path(L, id);
	int rc = 0;

	record_name(rec, id);
	if (group)
		rc = kill_group(group);
	if (!rc)
		unlinkat(L->root_fd, rec, 0);
	free(group);
	return rc;
}
