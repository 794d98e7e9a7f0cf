/* The watch verb's lease: <root>/.watch/NAME holds the highest generation
 * started under NAME, so that a newer watch supersedes an abandoned one. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup.h"

long long tb_lease_read(const char *path)
{
	char buf[64];
	long long v = 0;
	ssize_t n;
	size_t i = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	while (n > 0 && strchr(" \t\r\n", buf[n - 1]))
		n--;
	if (n == 0 || n > 16)
		return -1;
	for (; i < (size_t)n; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -1;
		v = v * 10 + (buf[i] - '0');
	}
	return v;
}

/* Writes GEN as decimal text to PATH: a temp file renamed over it. */
static void lease_write(const char *path, long long gen)
{
	char tmp[TB_MAX_PATH + 160], text[32];
	int fd, len = snprintf(text, sizeof(text), "%lld\n", gen);

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		tb_refuse(TB_INTERNAL, "cannot write the lease %s: %s", tmp,
		          strerror(errno));
	if (tb_write_all(fd, text, (size_t)len) < 0) {
		int e = errno;

		close(fd);
		tb_refuse(TB_INTERNAL, "cannot write the lease %s: %s", tmp,
		          strerror(e));
	}
	close(fd);
	if (rename(tmp, path) < 0)
		tb_refuse(TB_INTERNAL, "cannot write the lease %s: %s", path,
		          strerror(errno));
}

int tb_lease_take(const char *root, const char *name, long long gen, char *path,
                  size_t len)
{
	char dir[TB_MAX_PATH + 16];
	int dfd, taken = 0;

	snprintf(dir, sizeof(dir), "%s/.watch", root);
	snprintf(path, len, "%s/%s", dir, name);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		if (errno == ENOENT) {
			path[0] = '\0';
			return 1; /* no root: every task is missing */
		}
		tb_refuse(TB_INTERNAL, "cannot make %s: %s", dir,
		          strerror(errno));
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		tb_refuse(TB_INTERNAL, "cannot open %s: %s", dir,
		          strerror(errno));
	/* The check and the write are one step for every watch verb. */
	while (flock(dfd, LOCK_EX) < 0 && errno == EINTR) {
	}
	if (tb_lease_read(path) <= gen) {
		lease_write(path, gen);
		taken = tb_lease_read(path) <= gen;
	}
	close(dfd);
	return taken;
}
