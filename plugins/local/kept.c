/* Descriptors a connection keeps for its next reads. get_task reads the
 * same few files of a task on every call; a kept descriptor, confirmed by
 * one fstatat to still be the file its path names, replaces an openat, an
 * fstat and a close. Only regular files on the sandbox's own file system
 * are kept: there a size of 0 means empty, and a file's (device, inode)
 * names it for as long as the descriptor is open (an open inode's number
 * is not given to another file). Content is always read afresh, so a kept
 * file reads exactly like a newly opened one. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local_int.h"

/* The slot keeping rel below dirfd, or NULL. */
static struct tb_local_kept *find(struct tb_local_conn *c, int dirfd,
                                  const char *rel)
{
	for (int i = 0; i < TB_LOCAL_KEPT_MAX; i++)
		if (c->kept[i].rel && c->kept[i].dirfd == dirfd &&
		    !strcmp(c->kept[i].rel, rel))
			return &c->kept[i];
	return NULL;
}

static void drop(struct tb_local_kept *k)
{
	close(k->fd);
	free(k->rel);
	memset(k, 0, sizeof(*k));
}

int tb_local_kept_open(struct tb_local_conn *c, int dirfd, const char *rel,
                       struct stat *st, int *err)
{
	struct tb_local_kept *k = find(c, dirfd, rel);

	*err = 0;
	if (!k)
		return -1;
	if (fstatat(dirfd, rel, st, 0) != 0) {
		*err = errno;
		drop(k);
		return -1;
	}
	if (st->st_dev != k->dev || st->st_ino != k->ino) {
		drop(k); /* replaced: the caller opens the new file */
		return -1;
	}
	k->used = ++c->kept_clock;
	return k->fd;
}

int tb_local_sandbox_fs(struct tb_local_conn *c, dev_t *dev)
{
	struct stat st;

	if (!c->fs_known) {
		if (fstat(c->home_fd, &st) != 0)
			return 0;
		c->fs_dev = st.st_dev;
		c->fs_known = 1;
	}
	*dev = c->fs_dev;
	return 1;
}

int tb_local_kept_add(struct tb_local_conn *c, int dirfd, const char *rel,
                      int fd, const struct stat *st)
{
	struct tb_local_kept *k = &c->kept[0];
	char *copy;
	dev_t dev;

	if (!S_ISREG(st->st_mode) || !tb_local_sandbox_fs(c, &dev) ||
	    st->st_dev != dev || find(c, dirfd, rel) || !(copy = strdup(rel)))
		return 0;
	/* An empty slot (used 0), else the least recently used. */
	for (int i = 1; i < TB_LOCAL_KEPT_MAX; i++)
		if (c->kept[i].used < k->used)
			k = &c->kept[i];
	if (k->rel)
		drop(k);
	k->rel = copy;
	k->dirfd = dirfd;
	k->fd = fd;
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->used = ++c->kept_clock;
	return 1;
}

void tb_local_kept_forget(struct tb_local_conn *c, int fd)
{
	for (int i = 0; i < TB_LOCAL_KEPT_MAX; i++)
		if (c->kept[i].rel && c->kept[i].fd == fd)
			drop(&c->kept[i]);
}

void tb_local_kept_close(struct tb_local_conn *c)
{
	for (int i = 0; i < TB_LOCAL_KEPT_MAX; i++)
		if (c->kept[i].rel)
			drop(&c->kept[i]);
}
