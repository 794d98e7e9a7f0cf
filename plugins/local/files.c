/* read_file and write_file on the local provider. read_file is the hot path
 * of get_task: one fstatat and one pread of a kept descriptor (kept.c), or
 * an openat, an fstat and a pread; no spawning and no JSON.
 *
 * Relative paths resolve against the sandbox's home. Without bubblewrap,
 * absolute paths and ".." are taken as they are: the sandbox is no
 * confinement boundary (see local.c). Under bubblewrap the file system the
 * commands see is the host's, read-only, except the sandbox directory and
 * /tmp (the sandbox's tmp/). read_file reads a path in the sandbox (a
 * relative one, one under /tmp or under the sandbox's own path) inside the
 * sandbox's directory, whatever links and ".." it meets (inroot.c): an
 * absolute link resolves from the sandbox's directory (so /tmp/x is its
 * tmp/x, as commands see it), and nothing below the directory leads out
 * of it. Other absolute paths are the host's, read-only, as commands see
 * them. write_file writes only where the commands could.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local_int.h"

/* A zero-size regular file (procfs, sysfs) is read to EOF up to this. */
#define UNSIZED_MAX (64u << 20)

/* path without empty and "." components ("//tmp/./x" is "/tmp/x"), as the
 * kernel reads it: a new string, or NULL when out of memory. */
static char *squeeze(const char *path)
{
	char *out = malloc(strlen(path) + 2), *o = out;

	if (!out)
		return NULL;
	for (const char *p = path; *p;) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n && !(n == 1 && p[0] == '.')) {
			*o++ = '/';
			memcpy(o, p, n);
			o += n;
		}
		p += n;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

/* Nonzero when the squeezed absolute path sq is prefix or below it. */
static int below(const char *sq, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(sq, prefix, n) && (sq[n] == '/' || !sq[n]);
}

/* Under bubblewrap: a path of the sandbox as *rel below its directory
 * (*owned), or NULL for a host path. The sandbox's own path first: it is
 * bound over /tmp when it lies there. Commands see the root of all
 * sandboxes as an empty directory (exec.c), so another path below it
 * is missing: ENOENT. Returns 0, ENOENT or ENOMEM. */
static int bwrap_rel(struct tb_local_conn *c, const char *path, const char *sq,
                     char **owned)
{
	int n = 0;

	*owned = NULL;
	if (path[0] != '/')
		n = asprintf(owned, "home/%s", path);
	else if (below(sq, c->dir))
		n = asprintf(owned, ".%s", sq + strlen(c->dir));
	else if (below(sq, "/tmp"))
		n = asprintf(owned, "tmp%s", sq + 4);
	else if (below(sq, c->inst->root))
		return ENOENT;
	if (n < 0) {
		*owned = NULL;
		return ENOMEM;
	}
	return 0;
}

/* Where path lives: *dirfd and *rel for openat (*in_root: open it with
 * tb_local_open_in_root instead). *owned is set when rel was allocated.
 * Returns 0, or ENOENT (a path commands cannot see) or ENOMEM. */
static int resolve(struct tb_local_conn *c, const char *path, int *dirfd,
                   const char **rel, char **owned, int *in_root)
{
	int err;

	*owned = NULL;
	*in_root = 0;
	if (c->inst->bwrap) {
		/* /tmp is the sandbox's tmp/, however the path spells it. */
		char *sq = path[0] == '/' ? squeeze(path) : NULL;

		if (path[0] == '/' && !sq)
			return ENOMEM;
		if ((err = bwrap_rel(c, path, sq, owned))) {
			free(sq);
			return err;
		}
		if (*owned) {
			free(sq);
			*dirfd = c->dir_fd;
			*rel = *owned;
			*in_root = 1;
			return 0;
		}
		*owned = sq;
		*dirfd = AT_FDCWD;
		*rel = sq;
		return 0;
	}
	*dirfd = path[0] == '/' ? AT_FDCWD : c->home_fd;
	*rel = path;
	return 0;
}

/* The status for a failed open of a path in c's sandbox. */
static int open_failed(struct tb_local_conn *c, const char *path, int err,
                       char *errbuf, size_t errlen)
{
	if (tb_local_conn_gone(c)) {
		tb_local_err(errbuf, errlen, "sandbox %s was destroyed", c->id);
		return TASKBOX_E_GONE;
	}
	tb_local_err(errbuf, errlen, "%s: %s", path, strerror(err));
	return tb_local_errno_status(err);
}

/* Reads an unsized file from its start to EOF, keeping the bytes from
 * offset, at most length of them. Sets *size to the bytes seen. */
static int read_unsized(const struct taskbox_host *h, int fd, uint64_t offset,
                        size_t length, struct taskbox_buf *data, uint64_t *size)
{
	unsigned char chunk[8192];
	uint64_t pos = 0;
	size_t cap = 0;
	ssize_t n;

	while (pos < UNSIZED_MAX) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			break;
		uint64_t from = pos < offset ? offset - pos : 0;
		pos += (uint64_t)n;
		if (from >= (uint64_t)n || data->len >= length)
			continue;
		size_t take = (size_t)n - (size_t)from;
		if (take > length - data->len)
			take = length - data->len;
		if (data->len + take > cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			unsigned char *nd;
			while (ncap < data->len + take)
				ncap *= 2;
			if (ncap > length)
				ncap = length;
			nd = h->realloc(data->data, ncap);
			if (!nd)
				return ENOMEM;
			data->data = nd;
			cap = ncap;
		}
		memcpy(data->data + data->len, chunk + from, take);
		data->len += take;
	}
	*size = pos;
	return 0;
}

/* Reads at most length bytes from offset of a regular file of size size. */
static int read_sized(const struct taskbox_host *h, int fd, uint64_t offset,
                      size_t length, uint64_t size, struct taskbox_buf *data)
{
	size_t want;
	ssize_t n;

	if (offset >= size || length == 0)
		return 0;
	want = size - offset < length ? (size_t)(size - offset) : length;
	data->data = h->alloc(want);
	if (!data->data)
		return ENOMEM;
	while (data->len < want) {
		n = pread(fd, data->data + data->len, want - data->len,
		          (off_t)(offset + data->len));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			break;
		data->len += (size_t)n;
	}
	return 0;
}

/* Opens rel below dirfd for a read, through a kept descriptor when there
 * is one: returns the descriptor with its stat in *st and *kept set, or -1
 * with *err. */
static int open_for_read(struct tb_local_conn *c, int dirfd, const char *rel,
                         int in_root, struct stat *st, int *kept, int *err)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	int fd = tb_local_kept_open(c, dirfd, rel, st, err);

	*kept = fd >= 0;
	if (fd >= 0 || *err)
		return fd;
	fd = in_root
	         ? tb_local_open_in_root(dirfd, rel, flags, c->inst->no_openat2)
	         : openat(dirfd, rel, flags);
	if (fd < 0) {
		*err = in_root ? -fd : errno;
		return -1;
	}
	if (fstat(fd, st) != 0) {
		*err = errno;
		close(fd);
		return -1;
	}
	return fd;
}

int tb_local_read_file(void *conn, const char *path, uint64_t offset,
                       size_t length, struct taskbox_buf *data,
                       uint64_t *file_size, char *errbuf, size_t errlen)
{
	struct tb_local_conn *c = conn;
	const struct taskbox_host *h = c->inst->host;
	const char *rel;
	char *owned;
	struct stat st;
	int rc, err, dirfd, fd, kept, in_root;
	dev_t fs;

	data->data = NULL;
	data->len = 0;
	if (!path || !path[0]) {
		tb_local_err(errbuf, errlen, "path must not be empty");
		return TASKBOX_E_INVALID;
	}
	if ((rc = tb_local_conn_current(c, errbuf, errlen)))
		return rc;
	if ((err = resolve(c, path, &dirfd, &rel, &owned, &in_root)))
		goto fail;
	fd = open_for_read(c, dirfd, rel, in_root, &st, &kept, &err);
	if (fd < 0) {
		free(owned);
		return open_failed(c, path, err, errbuf, errlen);
	}
	if (!S_ISREG(st.st_mode)) { /* never a kept one: those are */
		free(owned);
		close(fd);
		tb_local_err(errbuf, errlen, "%s: not a regular file", path);
		return TASKBOX_E_INVALID;
	}
	if (st.st_size > 0) {
		*file_size = (uint64_t)st.st_size;
		err = read_sized(h, fd, offset, length, *file_size, data);
	} else if (tb_local_sandbox_fs(c, &fs) && st.st_dev == fs) {
		*file_size = 0; /* empty: nothing to read */
	} else {
		/* procfs, sysfs: the size is only known by reading. */
		err = read_unsized(h, fd, offset, length, data, file_size);
	}
	if (err) {
		if (kept)
			tb_local_kept_forget(c, fd);
		goto fail_fd;
	}
	if (!kept && !tb_local_kept_add(c, dirfd, rel, fd, &st))
		close(fd);
	free(owned);
	if (data->len == 0 && data->data) {
		h->free(data->data);
		data->data = NULL;
	}
	return TASKBOX_OK;
fail_fd:
	if (!kept)
		close(fd);
	h->free(data->data);
	data->data = NULL;
	data->len = 0;
fail:
	free(owned);
	tb_local_err(errbuf, errlen, "%s: %s", path, strerror(err));
	return tb_local_errno_status(err);
}

/* Under bubblewrap commands write only in the sandbox directory (and /tmp,
 * which is its tmp/); write_file keeps to the same: no "..", an absolute
 * path only below those, and the directories on the way resolved inside
 * the sandbox (open_parent). */
static int bwrap_write_allowed(struct tb_local_conn *c, const char *path)
{
	size_t dlen = strlen(c->dir);

	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return 0;
	if (path[0] != '/')
		return 1;
	if (!strncmp(path, "/tmp/", 5))
		return 1;
	return !strncmp(path, c->dir, dlen) && path[dlen] == '/';
}

/* Opens (creating as needed) every directory of the first dlen bytes of
 * rel below dirfd, following no link when nofollow is set. Returns an
 * O_PATH descriptor or -errno. */
static int open_parents(int dirfd, const char *rel, size_t dlen, int nofollow)
{
	int cur =
	    dirfd == AT_FDCWD ? open(".", O_PATH | O_CLOEXEC) : dup(dirfd);
	size_t i = 0;

	if (cur < 0)
		return -errno;
	if (rel[0] == '/') {
		close(cur);
		if ((cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			return -errno;
	}
	while (i < dlen) {
		char comp[256];
		size_t n = 0;
		int next;

		while (i < dlen && rel[i] == '/')
			i++;
		while (i < dlen && rel[i] != '/' && n < sizeof(comp) - 1)
			comp[n++] = rel[i++];
		if (n == 0)
			break;
		if (i < dlen && rel[i] != '/') {
			close(cur);
			return -ENAMETOOLONG;
		}
		comp[n] = '\0';
		if (mkdirat(cur, comp, 0755) != 0 && errno != EEXIST) {
			int e = errno;
			close(cur);
			return -e;
		}
		next = openat(cur, comp,
		              O_PATH | O_DIRECTORY | O_CLOEXEC |
		                  (nofollow ? O_NOFOLLOW : 0));
		close(cur);
		if (next < 0)
			return -errno;
		cur = next;
	}
	return cur;
}

/* The directory of the first dlen bytes of rel, for a new file: under
 * bubblewrap, in the sandbox (in_root), resolved as the commands resolve
 * it (links inside the sandbox followed, none out of it), and where it
 * does not exist yet made with no link followed; elsewhere open_parents.
 * Returns an O_PATH descriptor or -errno. */
static int open_parent(struct tb_local_conn *c, int dirfd, const char *rel,
                       size_t dlen, int in_root)
{
	char dir[PATH_MAX];

	if (!c->inst->bwrap || !in_root)
		return open_parents(dirfd, rel, dlen, c->inst->bwrap);
	if (dlen >= sizeof dir)
		return -ENAMETOOLONG;
	memcpy(dir, rel, dlen);
	dir[dlen] = '\0';
	int fd = tb_local_open_in_root(
	    dirfd, dlen ? dir : ".", O_PATH | O_DIRECTORY, c->inst->no_openat2);
	if (fd == -ENOENT)
		fd = open_parents(dirfd, rel, dlen, 1);
	return fd;
}

static int write_all(int fd, const unsigned char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int tb_local_write_file(void *conn, const char *path, const unsigned char *data,
                        size_t len, uint32_t mode, char *errbuf, size_t errlen)
{
	struct tb_local_conn *c = conn;
	const char *rel, *base;
	char *owned = NULL, tmp[300];
	unsigned char rnd[8];
	int rc, err, dirfd, pfd = -1, fd, in_root;

	if (!path || !path[0] || path[strlen(path) - 1] == '/') {
		tb_local_err(errbuf, errlen, "path must name a file");
		return TASKBOX_E_INVALID;
	}
	if (mode > 07777) {
		tb_local_err(errbuf, errlen, "mode %o has bits beyond 07777",
		             mode);
		return TASKBOX_E_INVALID;
	}
	if (c->inst->bwrap && !bwrap_write_allowed(c, path)) {
		tb_local_err(
		    errbuf, errlen,
		    "%.200s: under bubblewrap isolation files are "
		    "written only inside the sandbox (no '..'; absolute "
		    "paths below %s or /tmp)",
		    path, c->dir);
		return TASKBOX_E_PERMISSION;
	}
	if ((rc = tb_local_conn_alive(c, errbuf, errlen)))
		return rc;
	if ((err = resolve(c, path, &dirfd, &rel, &owned, &in_root)))
		goto fail;
	/* In the sandbox, no link is followed on the way (in_root or not). */
	base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	if (!strcmp(base, ".") || !strcmp(base, "..") || strlen(base) > 255) {
		free(owned);
		tb_local_err(errbuf, errlen,
		             "path '%.200s' must end in a file "
		             "name of 1 to 255 bytes",
		             path);
		return TASKBOX_E_INVALID;
	}
	if ((pfd = open_parent(c, dirfd, rel, (size_t)(base - rel), in_root)) <
	    0) {
		err = -pfd;
		goto fail;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		err = errno;
		goto fail;
	}
	snprintf(tmp, sizeof(tmp), ".%.200s.tmp-%02x%02x%02x%02x%02x%02x", base,
	         rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	err = write_all(fd, data, len);
	if (!err && fchmod(fd, (mode_t)mode) != 0)
		err = errno;
	if (close(fd) != 0 && !err)
		err = errno;
	if (err) {
		unlinkat(pfd, tmp, 0);
		goto fail;
	}
	if (renameat(pfd, tmp, pfd, base) != 0) {
		err = errno;
		unlinkat(pfd, tmp, 0);
		goto fail;
	}
	close(pfd);
	free(owned);
	return TASKBOX_OK;
fail:
	if (pfd >= 0)
		close(pfd);
	free(owned);
	if (err == ENOENT && tb_local_conn_gone(c)) {
		tb_local_err(errbuf, errlen, "sandbox %s was destroyed", c->id);
		return TASKBOX_E_GONE;
	}
	tb_local_err(errbuf, errlen, "cannot write %.200s: %s", path,
	             strerror(err));
	return tb_local_errno_status(err);
}
