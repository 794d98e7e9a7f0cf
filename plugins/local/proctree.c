/* Finding and stopping a sandbox's processes through /proc: what destroy
 * and expiry rely on where the sandbox has no cgroup (cgroup.c), and a
 * second sweep where it has one.
 *
 * A process belongs to sandbox <id> when any of these holds:
 *   - its environment holds TASKBOX_SANDBOX_ID=<id> (exec sets it, children
 *     inherit it);
 *   - its working directory is in the sandbox's directory (<root>/<id>, or
 *     <root>/.gone-<id>-* once destroy renamed it);
 *   - its mount namespace is not ours and has a mount on that directory:
 *     bubblewrap's, which a process without capabilities cannot leave;
 *   - its parent, or the leader of its process group or session, belongs.
 * The members are frozen (SIGSTOP) while the scan repeats, so none forks
 * or exits unseen, then killed (SIGKILL). What escapes (README.md): under
 * isolation "none", a process whose parent died, that made its own
 * session, scrubbed the marker and left the directory (a double fork of
 * `env -i setsid sh -c 'cd /; ...'`). Under isolation "bwrap" the mount
 * namespace holds.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "local_int.h"

#define ENVIRON_MAX (8u << 20)
#define MAX_PROCS 32768
#define GIVE_UP_MS 5000
#define NS_CACHE 64

struct proc {
	pid_t pid, ppid, pgrp, sid;
	int in;
};

struct scan {
	const char *root; /* the instance's root */
	const char *id;
	char rec[sizeof(TB_LOCAL_MARKER) + TB_LOCAL_ID_LEN + 1];
	char *buf; /* environ / mountinfo reads */
	size_t cap;
	char own_ns[64];
	struct {
		char ns[64];
		int in;
	} ns[NS_CACHE];
	unsigned n_ns;
	pid_t *members; /* found so far (frozen), sorted */
	size_t n_members, cap_members;
};

/* Nonzero when the NUL-separated records in buf hold one equal to rec. */
static int has_record(const char *buf, size_t len, const char *rec, size_t rlen)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *q = memchr(p, '\0', (size_t)(end - p));
		if (!q)
			q = end;
		if ((size_t)(q - p) == rlen && !memcmp(p, rec, rlen))
			return 1;
		p = q + 1;
	}
	return 0;
}

/* Reads /proc/<pid>/<name> whole into sc->buf (NUL-terminated). Returns
 * its length or -1. */
static ssize_t slurp(struct scan *sc, pid_t pid, const char *name)
{
	char path[64];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	for (;;) {
		if (len + 1 >= sc->cap) {
			size_t ncap = sc->cap ? sc->cap * 2 : 16384;
			char *nb;
			if (ncap > ENVIRON_MAX ||
			    !(nb = realloc(sc->buf, ncap)))
				break; /* judge by what was read */
			sc->buf = nb;
			sc->cap = ncap;
		}
		n = read(fd, sc->buf + len, sc->cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!sc->buf)
		return -1;
	sc->buf[len] = '\0';
	return (ssize_t)len;
}

/* Nonzero when the path p (n bytes, not NUL-terminated) is the sandbox's
 * directory or below it, under its own name or a destroy's .gone- one. */
static int in_sandbox_dir(const struct scan *sc, const char *p, size_t n)
{
	size_t rl = strlen(sc->root), il = strlen(sc->id), k;

	if (n <= rl || memcmp(p, sc->root, rl) || p[rl] != '/')
		return 0;
	p += rl + 1;
	n -= rl + 1;
	if (n >= il && !memcmp(p, sc->id, il))
		k = il;
	else if (n > il + 7 && !memcmp(p, ".gone-", 6) &&
	         !memcmp(p + 6, sc->id, il) && p[6 + il] == '-')
		k = 6 + il + 1 + strcspn(p + 6 + il + 1, "/ ");
	else
		return 0;
	return k == n || p[k] == '/' || p[k] == ' ';
}

/* Nonzero when a mount of mountinfo text mi is on the sandbox's directory
 * (mount points escape a space as \040: the root has none, or it is only
 * matched up to it). */
static int mounts_sandbox(const struct scan *sc, const char *mi)
{
	for (const char *line = mi; line && *line;) {
		const char *p = line, *next = strchr(line, '\n');
		int field = 0;

		while (field < 4 && (p = strchr(p, ' '))) {
			p++;
			field++;
		}
		if (p && (!next || p < next) &&
		    in_sandbox_dir(sc, p, strcspn(p, " \n")))
			return 1;
		line = next ? next + 1 : NULL;
	}
	return 0;
}

/* Nonzero when pid is in a mount namespace other than ours that mounts
 * the sandbox's directory (cached per namespace). */
static int in_sandbox_ns(struct scan *sc, pid_t pid)
{
	char path[64], ns[64];
	ssize_t n;
	int in;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	n = readlink(path, ns, sizeof(ns) - 1);
	if (n <= 0)
		return 0;
	ns[n] = '\0';
	if (!strcmp(ns, sc->own_ns))
		return 0;
	for (unsigned i = 0; i < sc->n_ns; i++)
		if (!strcmp(sc->ns[i].ns, ns))
			return sc->ns[i].in;
	in = slurp(sc, pid, "mountinfo") > 0 && mounts_sandbox(sc, sc->buf);
	if (sc->n_ns < NS_CACHE) {
		memcpy(sc->ns[sc->n_ns].ns, ns, (size_t)n + 1);
		sc->ns[sc->n_ns++].in = in;
	}
	return in;
}

/* Nonzero when pid belongs to the sandbox by itself (marker, directory,
 * namespace): the first three rules at the top of the file. */
static int own_link(struct scan *sc, pid_t pid)
{
	char path[64], cwd[4096];
	ssize_t n;

	n = slurp(sc, pid, "environ");
	if (n > 0 && has_record(sc->buf, (size_t)n, sc->rec, strlen(sc->rec)))
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	n = readlink(path, cwd, sizeof(cwd));
	if (n > 0 && in_sandbox_dir(sc, cwd, (size_t)n))
		return 1;
	return in_sandbox_ns(sc, pid);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int is_member(const struct scan *sc, pid_t pid)
{
	return pid > 1 && sc->n_members &&
	       bsearch(&pid, sc->members, sc->n_members, sizeof(pid_t),
	               cmp_pid) != NULL;
}

/* Reads pid's parent, process group and session from /proc/<pid>/stat. */
static int read_stat(struct scan *sc, struct proc *p)
{
	const char *rp;
	int ppid, pgrp, sid;

	if (slurp(sc, p->pid, "stat") <= 0 || !(rp = strrchr(sc->buf, ')')) ||
	    sscanf(rp + 1, " %*c %d %d %d", &ppid, &pgrp, &sid) != 3)
		return -1;
	p->ppid = ppid;
	p->pgrp = pgrp;
	p->sid = sid;
	return 0;
}

/* Our pid and our ancestors': never members. */
static int is_protected(pid_t pid)
{
	pid_t p = getpid();

	for (int depth = 0; p > 1 && depth < 64; depth++) {
		char path[64], buf[512], *rp;
		FILE *f;
		int ppid;

		if (pid == p)
			return 1;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)p);
		if (!(f = fopen(path, "re")))
			break;
		rp = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
			break;
		p = ppid;
	}
	return pid <= 1;
}

/* One scan: adds to sc->members (and freezes) every process that belongs
 * and is not there yet. Returns how many were added, or -1. */
static long scan_once(struct scan *sc)
{
	struct proc *ps = malloc(MAX_PROCS * sizeof(*ps));
	pid_t *in = malloc(MAX_PROCS * sizeof(pid_t));
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;
	long added = 0;
	int changed = 1;

	if (!ps || !in || !d) {
		free(ps);
		free(in);
		if (d)
			closedir(d);
		return -1;
	}
	while (n < MAX_PROCS && (e = readdir(d))) {
		char *endp;
		long v = strtol(e->d_name, &endp, 10);

		if (*endp || v <= 1 || (pid_t)v == getpid())
			continue;
		ps[n].pid = (pid_t)v;
		if (read_stat(sc, &ps[n]) != 0)
			continue;
		ps[n].in = is_member(sc, ps[n].pid) || own_link(sc, ps[n].pid);
		n++;
	}
	closedir(d);
	/* The closure over parents, group and session leaders. */
	while (changed) {
		size_t k = 0;

		changed = 0;
		for (size_t i = 0; i < n; i++)
			if (ps[i].in)
				in[k++] = ps[i].pid;
		qsort(in, k, sizeof(pid_t), cmp_pid);
		for (size_t i = 0; i < n; i++) {
			struct proc *p = &ps[i];
			if (p->in)
				continue;
			p->in =
			    bsearch(&p->ppid, in, k, sizeof(pid_t), cmp_pid) ||
			    bsearch(&p->pgrp, in, k, sizeof(pid_t), cmp_pid) ||
			    bsearch(&p->sid, in, k, sizeof(pid_t), cmp_pid);
			changed |= p->in;
		}
	}
	for (size_t i = 0; i < n; i++) {
		pid_t *nm;
		if (!ps[i].in || is_member(sc, ps[i].pid) ||
		    is_protected(ps[i].pid))
			continue;
		if (sc->n_members == sc->cap_members) {
			size_t ncap =
			    sc->cap_members ? sc->cap_members * 2 : 64;
			if (!(nm = realloc(sc->members, ncap * sizeof(pid_t))))
				break;
			sc->members = nm;
			sc->cap_members = ncap;
		}
		kill(ps[i].pid, SIGSTOP);
		sc->members[sc->n_members++] = ps[i].pid;
		added++;
	}
	if (sc->n_members)
		qsort(sc->members, sc->n_members, sizeof(pid_t), cmp_pid);
	free(ps);
	free(in);
	return added;
}

int tb_local_kill_tree(const char *root, const char *id)
{
	struct scan sc = {.root = root, .id = id};
	struct timespec pause = {0, 20 * 1000000L};
	ssize_t n;
	long added;
	int waited = 0, rc = 0;

	snprintf(sc.rec, sizeof(sc.rec), "%s=%s", TB_LOCAL_MARKER, id);
	n = readlink("/proc/self/ns/mnt", sc.own_ns, sizeof(sc.own_ns) - 1);
	sc.own_ns[n > 0 ? n : 0] = '\0';
	/* Freeze until a scan finds no one new, then kill them all; repeat
	 * for what an unfrozen instant let through. */
	while ((added = scan_once(&sc)) != 0) {
		if (added < 0 || waited >= GIVE_UP_MS) {
			rc = EBUSY;
			break;
		}
		while ((added = scan_once(&sc)) > 0)
			;
		for (size_t i = 0; i < sc.n_members; i++)
			kill(sc.members[i], SIGKILL);
		nanosleep(&pause, NULL);
		waited += 20;
	}
	free(sc.members);
	free(sc.buf);
	return rc;
}
