/* Lifetimes of local sandboxes, enforced with no taskbox process running.
 *
 * Every sandbox has a reaper: a small /bin/sh loop started detached at
 * create (posix_spawn of sh in a new session, which starts the loop in the
 * background, records "<its pid> <the loop's pid>" in reaper.pid and exits
 * at once, so the loop is re-parented to init and holds no terminal). The
 * loop, with an environment free of the sandbox marker so that it never
 * counts as one of the sandbox's processes:
 *   1. reads the deadline from meta.json (renewals replace that file, so
 *      each pass sees the latest); the file gone means the sandbox was
 *      destroyed: the reaper exits, after stopping the sandbox's processes
 *      if the directory was removed behind our back;
 *   2. if the deadline is ahead, sleeps until it, at most SLICE seconds at
 *      a time (so a renewal that shortens the lifetime is seen), and loops;
 *   3. once it has passed, renames the sandbox to .gone-<id>-<pid> (a
 *      concurrent destroy or connect then finds nothing to do), kills the
 *      sandbox's cgroup when it has one (the record checked as cgroup.c
 *      does), sends TERM to every process of our uid whose environment
 *      holds the sandbox's marker, whose working directory is in the
 *      sandbox or whose mount namespace mounts it, KILL to those still
 *      there after 2 s, until none is left, and removes the directory with
 *      rm -rf (which never follows links), then the owner record.
 * destroy stops the reaper (its whole process group, after checking that
 * the recorded pids still belong to this sandbox's reaper). The hosts's
 * checks complete the picture: connect and every op compare the deadline
 * themselves, and init sweeps the root, removing expired sandboxes and
 * half-removed ones, and restarting the reapers that a reboot took away.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "local_int.h"

#define REAPER_TAG "taskbox-reaper"
#define SLICE "30"
#define HALF_MADE_AGE 60

/* $1: the sandbox directory, $2: its id. */
static const char reaper_loop[] =
    "cd / || exit 1\n"
    "d=$1 id=$2\n"
    "cg_kill() {\n"
    "  r=${d%/*}/.cgroup-$id\n"
    "  cg=$(cat \"$r\" 2>/dev/null) || return 0\n"
    "  case $cg in /*/taskbox-$id) ;; *) rm -f \"$r\"; return 0 ;; esac\n"
    "  case $cg in *'/./'*|*'/../'*) return 0 ;; esac\n"
    "  [ \"$(stat -f -c %T \"$cg\" 2>/dev/null)\" = cgroup2fs ] || return 0\n"
    "  i=0\n"
    "  while [ -d \"$cg\" ] && [ \"$i\" -lt 50 ]; do\n"
    "    if [ -e \"$cg/cgroup.kill\" ]; then echo 1 > \"$cg/cgroup.kill\"\n"
    "    else kill -s KILL $(cat \"$cg/cgroup.procs\") 2>/dev/null; fi\n"
    "    rmdir \"$cg\" 2>/dev/null || sleep 1\n"
    "    i=$((i + 1))\n"
    "  done\n"
    "  [ -d \"$cg\" ] || rm -f \"$r\"\n"
    "}\n"
    "stop_all() {\n"
    "  cg_kill\n"
    "  i=0\n"
    "  while [ \"$i\" -lt 60 ]; do\n"
    "    p=\n"
    "    for f in $(grep -lxzF \"" TB_LOCAL_MARKER "=$id\" "
    "/proc/[0-9]*/environ 2>/dev/null) $(grep -lF \" $1\" "
    "/proc/[0-9]*/mountinfo 2>/dev/null) $(find /proc/[0-9]* "
    "-maxdepth 1 -name cwd \\( -lname \"$1\" -o -lname \"$1/*\" \\) "
    "2>/dev/null); do\n"
    "      f=${f#/proc/}\n"
    "      f=${f%/*}\n"
    "      [ -O \"/proc/$f\" ] && [ \"$f\" != $$ ] || continue\n"
    "      p=\"$p $f\"\n"
    "    done\n"
    "    [ -n \"$p\" ] || return 0\n"
    "    if [ \"$i\" -lt 2 ]; then s=TERM; else s=KILL; fi\n"
    "    kill -s \"$s\" $p 2>/dev/null\n"
    "    i=$((i + 1))\n"
    "    sleep 1\n"
    "  done\n"
    "}\n"
    "while :; do\n"
    "  if ! IFS= read -r m < \"$d/meta.json\"; then\n"
    "    [ -e \"$d\" ] || stop_all \"$d\"\n"
    "    exit 0\n"
    "  fi\n"
    "  dl=${m#*\\\"deadline\\\":}\n"
    "  dl=${dl%%[!0-9]*}\n"
    "  [ -n \"$dl\" ] || exit 0\n"
    "  now=$(date +%s) || exit 1\n"
    "  [ \"$now\" -lt \"$dl\" ] || break\n"
    "  n=$((dl - now))\n"
    "  [ \"$n\" -le " SLICE " ] || n=" SLICE "\n"
    "  sleep \"$n\"\n"
    "done\n"
    "g=${d%/*}/.gone-$id-$$\n"
    "mv -T -- \"$d\" \"$g\" 2>/dev/null || exit 0\n"
    "stop_all \"$g\"\n"
    "rm -rf --one-file-system -- \"$g\"\n"
    "exec rm -f -- \"${d%/*}/.owner-$id\"\n";

/* $1, $2 as above, $3: the loop's text. */
static const char reaper_launch[] =
    "/bin/sh -c \"$3\" " REAPER_TAG " \"$1\" \"$2\" &\n"
    "echo \"$$ $!\" > \"$1/reaper.pid\"\n";

int tb_local_reaper_start(struct tb_local *L, const char *id)
{
	char *dir = NULL;
	int st, rc = 0;

	if (asprintf(&dir, "%s/%s", L->root, id) < 0)
		return ENOMEM;
	char *argv[] = {"sh", "-c",       (char *)reaper_launch, REAPER_TAG,
	                dir,  (char *)id, (char *)reaper_loop,   NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
	st = tb_local_run_quiet("/bin/sh", argv, envp, 1);
	if (st < 0)
		rc = -st;
	else if (st != 0)
		rc = ECHILD;
	free(dir);
	return rc;
}

/* Reads a small file below dirfd (or an absolute path) into buf as a NUL
 * terminated string. Returns its length or -1. */
static ssize_t slurp(int dirfd, const char *path, char *buf, size_t cap)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Nonzero when the reaper recorded in dirfd still runs as the reaper of
 * sandbox id; sets *pgid to its process group. */
static int reaper_alive(int dirfd, const char *id, pid_t *pgid)
{
	char buf[4096], path[48];
	long g, p;
	ssize_t n;
	const char *rp, *tag, *arg;

	if (slurp(dirfd, "reaper.pid", buf, 64) < 0 ||
	    sscanf(buf, "%ld %ld", &g, &p) != 2 || g <= 1 || p <= 1)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", p);
	n = slurp(AT_FDCWD, path, buf, sizeof(buf));
	/* "... taskbox-reaper DIR ID ...", NUL-separated: the loop's own
	 * command line, or its launcher's for the instant before it execs. */
	if (n <= 0 || !(tag = memmem(buf, (size_t)n, "\0" REAPER_TAG "\0",
	                             sizeof(REAPER_TAG) + 1)))
		return 0;
	arg = tag + sizeof(REAPER_TAG) + 1;
	arg += strnlen(arg, (size_t)(buf + n - arg)) + 1; /* skip DIR */
	if (arg + TB_LOCAL_ID_LEN >= buf + n ||
	    memcmp(arg, id, TB_LOCAL_ID_LEN + 1))
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", p);
	if (slurp(AT_FDCWD, path, buf, sizeof(buf)) < 0 ||
	    !(rp = strrchr(buf, ')')) ||
	    sscanf(rp + 1, " %*c %*d %ld", &p) != 1 || p != g)
		return 0;
	*pgid = (pid_t)g;
	return 1;
}

void tb_local_reaper_stop(int dirfd, const char *id)
{
	pid_t pgid;

	if (reaper_alive(dirfd, id, &pgid))
		kill(-pgid, SIGTERM);
}

/* Handles one entry of the root at init (see the top of the file). */
static void sweep_one(struct tb_local *L, const char *name, time_t now)
{
	struct tb_local_meta m;
	struct stat st;
	char id[TB_LOCAL_ID_LEN + 1];
	pid_t pgid;
	int fd, err;

	if (!strncmp(name, ".gone-", 6) && strlen(name) > 6 + TB_LOCAL_ID_LEN &&
	    name[6 + TB_LOCAL_ID_LEN] == '-') {
		memcpy(id, name + 6, TB_LOCAL_ID_LEN);
		id[TB_LOCAL_ID_LEN] = '\0';
		if (tb_local_id_valid(id))
			tb_local_remove(L, id, name);
		return;
	}
	if (!strncmp(name, ".owner-", 7)) {
		tb_local_owner_sweep(L, name);
		return;
	}
	if (!tb_local_id_valid(name))
		return;
	fd = openat(L->root_fd, name,
	            O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	err = tb_local_meta_read(fd, NULL, &m);
	if (err) {
		/* Half made (or damaged): leave a young one to its creator. */
		if (fstat(fd, &st) == 0 && st.st_mtime + HALF_MADE_AGE < now) {
			close(fd);
			tb_local_remove(L, name, name);
			return;
		}
	} else if (m.deadline <= now) {
		close(fd);
		tb_local_remove(L, name, name);
		return;
	} else if (!reaper_alive(fd, name, &pgid)) {
		tb_local_reaper_start(L, name);
	}
	close(fd);
}

void tb_local_sweep(struct tb_local *L)
{
	int fd = openat(L->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	time_t now = time(NULL);

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* Collect first: removal renames entries of this directory. */
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && strncmp(e->d_name, ".gone-", 6) &&
		    strncmp(e->d_name, ".owner-", 7))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nn = realloc(names, ncap * sizeof(char *));
			if (!nn)
				break;
			names = nn;
			cap = ncap;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		sweep_one(L, names[i], now);
		free(names[i]);
	}
	free(names);
}
