/* The task root: its checks, its lock, its task directories. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup.h"

int tb_is_task_name(const char *name)
{
	return strlen(name) == 32 && strspn(name, "0123456789abcdef") == 32;
}

/* mkdir -p with mode 0700; returns 0 or an errno. */
static int make_dirs(const char *root)
{
	char path[TB_MAX_PATH + 1];
	size_t len = strlen(root);

	memcpy(path, root, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (path[i - 1] == '/')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			int e = errno;

			return e;
		}
		path[i] = root[i];
	}
	return 0;
}

int tb_root_lock(const char *root, int create)
{
	char path[TB_MAX_PATH + 16];
	struct stat st;
	int e;

	if (create && (e = make_dirs(root)) != 0) {
		if (e == ENOENT)
			tb_refuse(TB_INVALID,
			          "--root: a path component is missing");
		tb_refuse(TB_INVALID, "--root: %s", strerror(e));
	}
	if (stat(root, &st) < 0) {
		if (errno == ENOENT && !create)
			return -1;
		if (errno == ENOENT)
			tb_refuse(TB_INVALID,
			          "--root: a path component is missing");
		tb_refuse(TB_INVALID, "--root: %s", strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		tb_refuse(TB_INVALID, "--root: not a directory");
	if (st.st_uid != geteuid())
		tb_refuse(TB_INVALID, "--root: not owned by this user");
	if (create && (st.st_mode & 07077))
		chmod(root, 0700);
	snprintf(path, sizeof(path), "%s/.lock", root);
	return tb_lock_file(path);
}

int tb_lock_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		tb_refuse(TB_INTERNAL, "internal error: %s: %s", path,
		          strerror(errno));
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR)
			tb_refuse(TB_INTERNAL, "internal error: lock: %s",
			          strerror(errno));
	return fd;
}

size_t tb_task_names(const char *root, char (*names)[33], size_t max)
{
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	dir = opendir(root);
	if (!dir) {
		if (errno == ENOENT)
			return 0;
		if (errno == ENOTDIR)
			tb_refuse(TB_INVALID, "--root: not a directory");
		tb_refuse(TB_INTERNAL, "internal error: %s: %s", root,
		          strerror(errno));
	}
	while ((d = readdir(dir))) {
		struct stat st;

		if (!tb_is_task_name(d->d_name))
			continue;
		if (d->d_type != DT_DIR && (d->d_type != DT_UNKNOWN ||
		                            fstatat(dirfd(dir), d->d_name, &st,
		                                    AT_SYMLINK_NOFOLLOW) < 0 ||
		                            !S_ISDIR(st.st_mode)))
			continue;
		if (names && n < max)
			memcpy(names[n], d->d_name, 33);
		n++;
	}
	closedir(dir);
	return n;
}

/* Empties the directory DFD (which it closes) without following links. */
static int empty_dir(int dfd)
{
	struct dirent *d;
	DIR *dir = fdopendir(dfd);
	int rc = 0;

	if (!dir) {
		close(dfd);
		return -1;
	}
	while ((d = readdir(dir))) {
		struct stat st;
		int sub;

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = -1;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			sub = openat(dfd, d->d_name,
			             O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			                 O_CLOEXEC);
			if (sub < 0 || empty_dir(sub) < 0 ||
			    unlinkat(dfd, d->d_name, AT_REMOVEDIR) < 0)
				rc = -1;
		} else if (unlinkat(dfd, d->d_name, 0) < 0) {
			rc = -1;
		}
	}
	closedir(dir);
	return rc;
}

int tb_remove_tree(const char *path)
{
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dfd < 0)
		return -1;
	if (empty_dir(dfd) < 0)
		return -1;
	return rmdir(path);
}
