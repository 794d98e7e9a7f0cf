/* read_file and write_file, each one exec of a short sh script in the pod.
 * read: the size (stat, else wc) first on stderr, then exactly the range
 * with dd (skip_bytes/count_bytes; tail|head where dd lacks them), so the
 * file never crosses the wire whole; procfs and sysfs files, whose size
 * says 0, are read whole with cat and cut here. write: stdin (ended by the
 * v5 CLOSE, and by its length for v4) into a temporary file beside the
 * target, then chmod and mv, after making the parent directories. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_int.h"

#define READ_SCRIPT                                                            \
	"f=$1; off=$2; len=$3; [ -e \"$f\" ] || exit 3; [ -d \"$f\" ] && "     \
	"exit 4; [ -r \"$f\" ] || exit 5; case $f in /proc/*|/sys/*) echo - "  \
	">&2; exec cat \"$f\";; esac; s=$(stat -c %s \"$f\" 2>/dev/null || "   \
	"wc -c <\"$f\") || exit 5; echo $s >&2; [ \"$len\" -gt 0 ] || exit "   \
	"0; dd if=\"$f\" iflag=skip_bytes,count_bytes skip=\"$off\" "          \
	"count=\"$len\" bs=65536 2>/dev/null || { tail -c +$((off+1)) "        \
	"\"$f\" | head -c \"$len\"; }"
#define WRITE_SCRIPT                                                           \
	"p=$1; m=$2; n=$3; d=$(dirname \"$p\"); mkdir -p \"$d\" || exit 1; "   \
	"t=\"$d/.taskbox-write.$$\"; head -c \"$n\" >\"$t\" && [ \"$(wc -c "   \
	"<\"$t\")\" -eq \"$n\" ] && chmod \"$m\" \"$t\" && mv -f \"$t\" "      \
	"\"$p\" || { rm -f \"$t\"; exit 1; }"
#define PROCFS_CAP (16u * 1024 * 1024)
#define FILE_OP_TIMEOUT_MS 60000u

static int is_procfs(const char *path)
{
	return strncmp(path, "/proc/", 6) == 0 ||
	       strncmp(path, "/sys/", 5) == 0;
}

/* The first line of stderr, trimmed, for messages. */
static void first_line(const struct taskbox_buf *b, char *out, size_t outlen)
{
	size_t n = 0;

	while (n < b->len && b->data[n] != '\n' && n + 1 < outlen)
		n++;
	memcpy(out, b->data ? (const char *)b->data : "", n);
	out[n] = '\0';
}

/* Slices [offset, offset+length) of a whole procfs read into *data. */
static int slice(const struct taskbox_host *host, struct taskbox_buf *all,
                 uint64_t offset, size_t length, struct taskbox_buf *data,
                 char *errbuf, size_t errlen)
{
	size_t n = 0;

	if (offset < all->len)
		n = all->len - (size_t)offset < length
		        ? all->len - (size_t)offset
		        : length;
	if (n == 0)
		return TASKBOX_OK;
	data->data = host->alloc(n);
	if (!data->data)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	memcpy(data->data, all->data + offset, n);
	data->len = n;
	return TASKBOX_OK;
}

int tb_k8s_read_file(struct tb_k8s_conn *c, const char *path, uint64_t offset,
                     size_t length, struct taskbox_buf *data,
                     uint64_t *file_size, char *errbuf, size_t errlen)
{
	const struct taskbox_host *host = c->inst->host;
	char off[32], len[32], line[256];
	struct taskbox_exec_result res;
	char *full = tb_k8s_resolve(c, path);
	const char *argv[] = {"/bin/sh", "-c", READ_SCRIPT, "sh",
	                      full,      off,  len,         NULL};
	int procfs, rc;

	data->data = NULL;
	data->len = 0;
	*file_size = UINT64_MAX;
	if (!full)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	procfs = is_procfs(full);
	snprintf(off, sizeof off, "%llu", (unsigned long long)offset);
	snprintf(len, sizeof len, "%zu", length);
	memset(&res, 0, sizeof res);
	res.struct_size = sizeof res;
	rc = tb_k8s_exec_plain(c, argv, NULL, 0, FILE_OP_TIMEOUT_MS,
	                       procfs ? PROCFS_CAP : length, &res, errbuf,
	                       errlen);
	if (rc != TASKBOX_OK)
		goto out;
	first_line(&res.err, line, sizeof line);
	switch (res.exit_code) {
	case 0:
		break;
	case 3:
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                 "no file %.200s in the sandbox", full);
		goto out;
	case 4:
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                 "%.200s is a directory", full);
		goto out;
	case 5:
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_PERMISSION,
		                 "%.200s cannot be read in the sandbox", full);
		goto out;
	default:
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_IO,
		                 "reading %.200s failed (exit %d): %s", full,
		                 res.exit_code, line);
		goto out;
	}
	if (line[0] == '-') {
		rc =
		    slice(host, &res.out, offset, length, data, errbuf, errlen);
		if (rc == TASKBOX_OK)
			*file_size = res.out.len;
		goto out;
	}
	if (line[0] < '0' || line[0] > '9') {
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                 "reading %.200s: no size came (%s)", full,
		                 line);
		goto out;
	}
	*file_size = strtoull(line, NULL, 10);
	if (res.out.len > length)
		res.out.len = length; /* never more than asked */
	/* The file grew between stat and dd: what was read is there. */
	if (res.out.len && offset + res.out.len > *file_size)
		*file_size = offset + res.out.len;
	*data = res.out;
	res.out.data = NULL;
	res.out.len = 0;
out:
	host->free(res.out.data);
	host->free(res.err.data);
	free(full);
	return rc;
}

int tb_k8s_write_file(struct tb_k8s_conn *c, const char *path,
                      const unsigned char *data, size_t len, uint32_t mode,
                      char *errbuf, size_t errlen)
{
	const struct taskbox_host *host = c->inst->host;
	char m[16], n[32], line[256];
	struct taskbox_exec_result res;
	char *full = tb_k8s_resolve(c, path);
	const char *argv[] = {"/bin/sh", "-c", WRITE_SCRIPT, "sh", full,
	                      m,         n,    NULL};
	uint32_t timeout = FILE_OP_TIMEOUT_MS + (uint32_t)(len / 100000u);
	int rc;

	if (!full)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	snprintf(m, sizeof m, "%o", (unsigned)(mode & 07777));
	snprintf(n, sizeof n, "%zu", len);
	memset(&res, 0, sizeof res);
	res.struct_size = sizeof res;
	rc = tb_k8s_exec_plain(c, argv, data ? data : (const unsigned char *)"",
	                       len, timeout, 4096, &res, errbuf, errlen);
	if (rc == TASKBOX_OK && res.exit_code != 0) {
		first_line(&res.err, line, sizeof line);
		rc = tb_k8s_fail(errbuf, errlen,
		                 strstr(line, "ermission denied")
		                     ? TASKBOX_E_PERMISSION
		                     : TASKBOX_E_IO,
		                 "writing %.200s failed (exit %d): %s", full,
		                 res.exit_code, line[0] ? line : "no message");
	}
	host->free(res.out.data);
	host->free(res.err.data);
	free(full);
	return rc;
}
