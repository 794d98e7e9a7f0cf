/* Removing a sandbox's files, never following a link. Its processes are
 * stopped by cgroup.c and proctree.c. */
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

/* Empties the directory open as fd, recursively, never following links. */
static int empty_dir(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		close(fd);
		return errno;
	}
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (unlinkat(dirfd(d), n, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			rc = rc ? rc : errno;
			continue;
		}
		if (depth > 256) {
			rc = rc ? rc : ELOOP;
			continue;
		}
		/* Our own directory that we may have made unwritable. */
		fchmodat(dirfd(d), n, 0700, AT_SYMLINK_NOFOLLOW);
		int sub =
		    openat(dirfd(d), n,
		           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = sub < 0 ? errno : empty_dir(sub, depth + 1);
		if (!err && unlinkat(dirfd(d), n, AT_REMOVEDIR) != 0)
			err = errno;
		if (err && err != ENOENT)
			rc = rc ? rc : err;
	}
	closedir(d);
	return rc;
}

int tb_local_rmtree(int dirfd, const char *name)
{
	int fd, rc;

	fchmodat(dirfd, name, 0700, AT_SYMLINK_NOFOLLOW);
	fd = openat(dirfd, name,
	            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : errno;
	rc = empty_dir(fd, 0);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = rc ? rc : errno;
	return rc;
}
