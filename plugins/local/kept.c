/* Descriptors a connection keeps for its next reads. get_task reads the
 * same few files of a task on every call; a kept descriptor, confirmed by
 * one fstatat to still be the file its path names, replaces an openat, an
 * fstat and a close. A connection keeps up to TB_LOCAL_KEPT_MAX of them
 * (all the files of 16 tasks polled in turn, which a smaller set would
 * keep missing), and all connections of an instance together up to
 * TB_LOCAL_KEPT_TOTAL (a quarter of the open-file limit when lower). Only
 * regular files on the sandbox's own file system are kept: there a size
 * of 0 means empty, and a file's (device, inode) names it for as long as
 * the descriptor is open (an open inode's number is not given to another
 * file). Content is always read afresh, so a kept file reads exactly like
 * a newly opened one. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local_int.h"

/* FNV-1a of s. */
static uint32_t hash_of(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* The slot keeping rel (of hash h) below dirfd, or NULL. */
static struct tb_local_kept *find(struct tb_local_conn *c, int dirfd,
                                  const char *rel, uint32_t h)
{
	for (int i = 0; i < TB_LOCAL_KEPT_MAX; i++)
		if (c->kept[i].rel && c->kept[i].hash == h &&
		    c->kept[i].dirfd == dirfd && !strcmp(c->kept[i].rel, rel))
			return &c->kept[i];
	return NULL;
}

static void drop(struct tb_local_conn *c, struct tb_local_kept *k)
{
	close(k->fd);
	free(k->rel);
	memset(k, 0, sizeof(*k));
	__atomic_sub_fetch(&c->inst->kept_total, 1, __ATOMIC_RELAXED);
}

int tb_local_kept_open(struct tb_local_conn *c, int dirfd, const char *rel,
                       struct stat *st, int *err)
{
	struct tb_local_kept *k = find(c, dirfd, rel, hash_of(rel));

	*err = 0;
	if (!k)
		return -1;
	if (fstatat(dirfd, rel, st, 0) != 0) {
		/* The caller opens it afresh and tells why it cannot: under
		 * bubblewrap it resolves links in the sandbox, this fstatat
		 * on the host. */
		drop(c, k);
		return -1;
	}
	if (st->st_dev != k->dev || st->st_ino != k->ino) {
		drop(c, k); /* replaced: the caller opens the new file */
		return -1;
	}
	k->used = ++c->kept_clock;
	return k->fd;
}

unsigned tb_local_kept_cap(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur / 4 >= TB_LOCAL_KEPT_TOTAL)
		return TB_LOCAL_KEPT_TOTAL;
	return (unsigned)(rl.rlim_cur / 4);
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

/* The least recently read slot (an empty one first, its used being 0),
 * or with occupied set the least recently read kept one (NULL: none). */
static struct tb_local_kept *least_used(struct tb_local_conn *c, int occupied)
{
	struct tb_local_kept *k = NULL;

	for (int i = 0; i < TB_LOCAL_KEPT_MAX; i++)
		if ((!occupied || c->kept[i].rel) &&
		    (!k || c->kept[i].used < k->used))
			k = &c->kept[i];
	return k;
}

int tb_local_kept_add(struct tb_local_conn *c, int dirfd, const char *rel,
                      int fd, const struct stat *st)
{
	struct tb_local_kept *k;
	uint32_t h = hash_of(rel);
	char *copy;
	dev_t dev;

	if (!S_ISREG(st->st_mode) || !tb_local_sandbox_fs(c, &dev) ||
	    st->st_dev != dev || find(c, dirfd, rel, h))
		return 0;
	k = least_used(c, 0);
	/* A new descriptor while the instance keeps its most: this
	 * connection gives up its own least recently read one, if any. */
	if (!k->rel &&
	    __atomic_add_fetch(&c->inst->kept_total, 1, __ATOMIC_RELAXED) >
	        c->inst->kept_cap) {
		__atomic_sub_fetch(&c->inst->kept_total, 1, __ATOMIC_RELAXED);
		if (!(k = least_used(c, 1)))
			return 0;
	}
	if (!(copy = strdup(rel))) {
		if (!k->rel)
			__atomic_sub_fetch(&c->inst->kept_total, 1,
			                   __ATOMIC_RELAXED);
		return 0;
	}
	if (k->rel) {
		/* Reused: its descriptor goes, its count stays. */
		close(k->fd);
		free(k->rel);
	}
	k->rel = copy;
	k->hash = h;
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
			drop(c, &c->kept[i]);
}

void tb_local_kept_close(struct tb_local_conn *c)
{
	for (int i = 0; i < TB_LOCAL_KEPT_MAX; i++)
		if (c->kept[i].rel)
			drop(c, &c->kept[i]);
}
