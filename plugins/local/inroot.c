/* Opening a path inside a directory that nothing below it can lead out of:
 * openat2 with RESOLVE_IN_ROOT (".." stops at the directory, an absolute
 * symbolic link starts again from it) and RESOLVE_NO_MAGICLINKS, or, where
 * the kernel (or valgrind) has no openat2, the same walk done here: one
 * component at a time, each opened with O_NOFOLLOW, each link read and
 * resolved by us with the same rules. Under bubblewrap read_file resolves
 * every path in the sandbox's directory this way (files.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "local_int.h"

#define MAX_LINKS 40 /* as the kernel's */

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* The walk's state: the directories from the root down, and the path
 * still to resolve. */
struct walk {
	int *fds;
	size_t n, cap;
	char *rest;
};

static void pop_to(struct walk *w, size_t n)
{
	while (w->n > n)
		close(w->fds[--w->n]);
}

static int push(struct walk *w, int fd)
{
	if (w->n == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 16;
		int *nf = realloc(w->fds, ncap * sizeof(int));
		if (!nf) {
			close(fd);
			return ENOMEM;
		}
		w->fds = nf;
		w->cap = ncap;
	}
	w->fds[w->n++] = fd;
	return 0;
}

/* Replaces the resolved component by the link's target: rest becomes
 * target + "/" + after (after: what followed the link, maybe ""). */
static int splice_link(struct walk *w, int linkfd, const char *after)
{
	char target[PATH_MAX + 1], *nr;
	ssize_t n = readlinkat(linkfd, "", target, PATH_MAX);
	size_t al = strlen(after);

	if (n < 0)
		return errno;
	if (n == 0)
		return ENOENT;
	target[n] = '\0';
	if (!(nr = malloc((size_t)n + al + 2)))
		return ENOMEM;
	memcpy(nr, target, (size_t)n);
	nr[n] = '/';
	memcpy(nr + n + 1, after, al + 1);
	if (!al)
		nr[n] = '\0';
	if (target[0] == '/')
		pop_to(w, 1); /* absolute: from the root again */
	free(w->rest);
	w->rest = nr;
	return 0;
}

/* The walk itself. Returns a descriptor or -errno. */
static int walk_open(int root, const char *path, int flags)
{
	struct walk w = {0};
	int links = 0, rc = 0, fd = -1;
	size_t pos = 0;

	if ((fd = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if ((rc = push(&w, fd)))
		goto out;
	fd = -1;
	if (!(w.rest = strdup(path))) {
		rc = ENOMEM;
		goto out;
	}
	for (;;) {
		char *comp = w.rest + pos, *after;
		size_t len;
		int dirfd = w.fds[w.n - 1], trailing;
		struct stat st;

		while (*comp == '/')
			comp++;
		len = strcspn(comp, "/");
		after = comp + len;
		trailing = *after == '/';
		while (*after == '/')
			after++;
		if (len == 0) { /* the end: the directory reached */
			fd = openat(dirfd, ".", flags | O_CLOEXEC);
			rc = fd < 0 ? errno : 0;
			break;
		}
		if (len > NAME_MAX) {
			rc = ENAMETOOLONG;
			break;
		}
		comp[len] = '\0';
		pos = (size_t)(after - w.rest);
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			if (w.n > 1)
				pop_to(&w, w.n - 1);
			continue;
		}
		int cur = openat(dirfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (cur < 0 || fstat(cur, &st) != 0) {
			rc = errno;
			if (cur >= 0)
				close(cur);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++links > MAX_LINKS)
				rc = ELOOP;
			else
				rc = splice_link(&w, cur, after);
			close(cur);
			if (rc)
				break;
			pos = 0;
			continue;
		}
		if (!*after && !trailing) { /* the last component */
			close(cur);
			fd =
			    openat(dirfd, comp, flags | O_NOFOLLOW | O_CLOEXEC);
			rc = fd < 0 ? errno : 0;
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(cur);
			rc = ENOTDIR;
			break;
		}
		if ((rc = push(&w, cur)))
			break;
	}
out:
	pop_to(&w, 0);
	free(w.fds);
	free(w.rest);
	return rc ? -rc : fd;
}

int tb_local_open_in_root(int root, const char *path, int flags, int no_openat2)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_CLOEXEC),
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	for (int tries = 0; !no_openat2 && tries < 8; tries++) {
		fd = syscall(SYS_openat2, root, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno == ENOSYS)
			break;
		if (errno != EAGAIN) /* EAGAIN: a rename raced the walk */
			return -errno;
	}
	return walk_open(root, path, flags);
}
