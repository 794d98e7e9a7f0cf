/* read_files: every item read by one exec, so that a get_task (a status
 * record, two log pages, a heartbeat) costs one round trip to the pod
 * instead of four. The script answers each item with a header line
 * "STATUS SIZE N" and then exactly N bytes; each range is read to a
 * temporary file in the home first, so N is what was really read even when
 * the file changes meanwhile. procfs and sysfs items go through read_file
 * (their size must be read to be known). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_int.h"

#define BATCH_SCRIPT                                                           \
	"t=\"$1/.taskbox-rf.$$\"; shift; trap 'rm -f \"$t\"' EXIT; while [ "   \
	"$# -ge 3 ]; do f=$1; off=$2; len=$3; shift 3; if [ ! -e \"$f\" ]; "   \
	"then echo '3 0 0'; continue; fi; if [ -d \"$f\" ]; then echo '4 0 "   \
	"0'; continue; fi; if [ ! -r \"$f\" ]; then echo '5 0 0'; continue; "  \
	"fi; s=$(stat -c %s \"$f\" 2>/dev/null || wc -c <\"$f\"); if [ "       \
	"\"$len\" -gt 0 ]; then dd if=\"$f\" iflag=skip_bytes,count_bytes "    \
	"skip=\"$off\" count=\"$len\" bs=65536 2>/dev/null >\"$t\" || tail "   \
	"-c +$((off+1)) \"$f\" | head -c \"$len\" >\"$t\"; else : >\"$t\"; "   \
	"fi; n=$(wc -c <\"$t\"); echo \"0 $s $n\"; cat \"$t\"; done"
#define BATCH_TIMEOUT_MS 60000u

static int is_procfs(const char *path)
{
	return strncmp(path, "/proc/", 6) == 0 ||
	       strncmp(path, "/sys/", 5) == 0;
}

/* Takes one item's answer off the front of *p (len *n left). */
static int take_item(const struct taskbox_host *host,
                     struct taskbox_read_item *it, const char *full,
                     const unsigned char **p, size_t *n, char *errbuf,
                     size_t errlen)
{
	const unsigned char *nl = memchr(*p, '\n', *n < 80 ? *n : 80);
	char line[96];
	unsigned long long size, got;
	int status;

	if (!nl)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                   "read_files: no answer for %.200s", full);
	memcpy(line, *p, (size_t)(nl - *p));
	line[nl - *p] = '\0';
	*n -= (size_t)(nl - *p) + 1;
	*p = nl + 1;
	if (sscanf(line, "%d %llu %llu", &status, &size, &got) != 3 ||
	    got > *n || got > it->length)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                   "read_files: a bad answer for %.200s", full);
	if (status == 3) {
		it->status = TASKBOX_E_NOT_FOUND;
		return TASKBOX_OK;
	}
	if (status != 0)
		return tb_k8s_fail(
		    errbuf, errlen,
		    status == 4 ? TASKBOX_E_INVALID : TASKBOX_E_PERMISSION,
		    "read_files: %.200s %s", full,
		    status == 4 ? "is a directory" : "cannot be read");
	if (got) {
		it->data.data = host->alloc((size_t)got);
		if (!it->data.data)
			return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
			                   "out of memory");
		memcpy(it->data.data, *p, (size_t)got);
		it->data.len = (size_t)got;
	}
	*p += got;
	*n -= (size_t)got;
	it->file_size = size;
	if (got && it->offset + got > size)
		it->file_size = it->offset + got; /* it grew meanwhile */
	it->status = TASKBOX_OK;
	return TASKBOX_OK;
}

int tb_k8s_read_files(struct tb_k8s_conn *c,
                      struct taskbox_read_item *const *items, size_t count,
                      char *errbuf, size_t errlen)
{
	const struct taskbox_host *host = c->inst->host;
	struct taskbox_exec_result res;
	const char **argv = calloc(count * 3 + 6, sizeof *argv);
	char **owned = calloc(count * 3 + 1, sizeof *owned);
	size_t i, k = 0, o = 0, limit = 0, batched = 0, n;
	const unsigned char *p;
	int rc = TASKBOX_OK;

	memset(&res, 0, sizeof res);
	res.struct_size = sizeof res;
	if (!argv || !owned) {
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                 "out of memory");
		goto out;
	}
	argv[k++] = "/bin/sh";
	argv[k++] = "-c";
	argv[k++] = BATCH_SCRIPT;
	argv[k++] = "sh";
	argv[k++] = c->inst->workdir;
	for (i = 0; i < count; i++) {
		struct taskbox_read_item *it = items[i];
		char *full = tb_k8s_resolve(c, it->path);
		if (!full || !(owned[o++] = full) ||
		    !(owned[o++] = malloc(24)) || !(owned[o++] = malloc(24))) {
			rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
			                 "out of memory");
			goto out;
		}
		it->status = -1;
		if (is_procfs(full)) {
			rc = tb_k8s_read_file(c, full, it->offset, it->length,
			                      &it->data, &it->file_size, errbuf,
			                      errlen);
			if (rc == TASKBOX_E_NOT_FOUND)
				rc = TASKBOX_OK,
				it->status = TASKBOX_E_NOT_FOUND;
			else if (rc == TASKBOX_OK)
				it->status = TASKBOX_OK;
			else
				goto out;
			continue;
		}
		snprintf(owned[o - 2], 24, "%llu",
		         (unsigned long long)it->offset);
		snprintf(owned[o - 1], 24, "%zu", it->length);
		argv[k++] = full;
		argv[k++] = owned[o - 2];
		argv[k++] = owned[o - 1];
		limit += it->length + 80;
		batched++;
	}
	if (!batched)
		goto out;
	rc = tb_k8s_exec_plain(c, argv, NULL, 0, BATCH_TIMEOUT_MS, limit, &res,
	                       errbuf, errlen);
	if (rc != TASKBOX_OK)
		goto out;
	if (res.exit_code != 0 || res.out_truncated) {
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_IO,
		                 "read_files: the reading script failed (exit "
		                 "%d)",
		                 res.exit_code);
		goto out;
	}
	p = res.out.data;
	n = res.out.len;
	for (i = 0, k = 5; i < count && rc == TASKBOX_OK; i++) {
		if (items[i]->status != -1)
			continue; /* a procfs item, read already */
		rc = take_item(host, items[i], argv[k], &p, &n, errbuf, errlen);
		k += 3;
	}
out:
	host->free(res.out.data);
	host->free(res.err.data);
	for (i = 0; owned && i < o; i++)
		free(owned[i]);
	free(owned);
	free(argv);
	return rc;
}
