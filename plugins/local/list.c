/* describe and list: what the local provider knows of its sandboxes (ids,
 * owners from the owner records of owner.c, creation and expiry times from
 * those records and meta.json). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "local_int.h"

/* Copies every field of src that fits the host's dst->struct_size. */
static void info_copy(struct taskbox_sandbox_info *dst,
                      const struct taskbox_sandbox_info *src)
{
	size_t head = sizeof(dst->struct_size);
	size_t n =
	    dst->struct_size < sizeof(*src) ? dst->struct_size : sizeof(*src);

	if (n > head)
		memcpy((char *)dst + head, (const char *)src + head, n - head);
}

/* Fills info from a sandbox's owner record (ENOENT: none, then created
 * from meta.json) and its deadline. */
static void info_fill(struct taskbox_sandbox_info *info, const char *id,
                      const char *owner, int64_t owner_created,
                      int64_t meta_created, int64_t deadline)
{
	memset(info, 0, sizeof(*info));
	info->struct_size = sizeof(*info);
	snprintf(info->id, sizeof(info->id), "%.*s", TB_LOCAL_ID_LEN, id);
	snprintf(info->owner, sizeof(info->owner), "%s", owner);
	info->created_s = owner_created > 0 ? owner_created : meta_created;
	info->expires_s = deadline;
}

int tb_local_describe(void *conn, struct taskbox_sandbox_info *info,
                      char *errbuf, size_t errlen)
{
	struct tb_local_conn *c = conn;
	struct taskbox_sandbox_info mine;
	int rc, err;

	if (!info || info->struct_size < sizeof(info->struct_size)) {
		tb_local_err(errbuf, errlen,
		             "describe: info is NULL or its struct_size is "
		             "too small");
		return TASKBOX_E_INVALID;
	}
	/* One fstatat: destroyed, expired or renewed elsewhere since. */
	if ((rc = tb_local_conn_alive(c, errbuf, errlen)))
		return rc;
	if (!c->owner_known) {
		err = tb_local_owner_read(c->inst, c->id, c->owner,
		                          &c->owner_created);
		if (err == ENOENT) {
			c->owner[0] = '\0';
			c->owner_created = 0;
		} else if (err) {
			tb_local_err(errbuf, errlen,
			             "sandbox %s: cannot read its owner record "
			             "(.owner-%s in the root): %s",
			             c->id, c->id,
			             err == EPROTO ? "malformed"
			                           : strerror(err));
			return TASKBOX_E_IO;
		}
		c->owner_known = 1;
	}
	info_fill(&mine, c->id, c->owner, c->owner_created, c->created,
	          c->deadline);
	info_copy(info, &mine);
	return TASKBOX_OK;
}

/* Fills info for sandbox id of the root when it lives, was made with this
 * instance's isolation and is owner's (any when owner is NULL). Returns 1
 * when info is filled, else 0 (skip it). */
static int list_one(struct tb_local *L, const char *id, const char *owner,
                    time_t now, struct taskbox_sandbox_info *info)
{
	char path[TB_LOCAL_ID_LEN + 16], who[TASKBOX_OWNER_MAX], msg[160];
	struct tb_local_meta m;
	int64_t created = 0;
	int err;

	snprintf(path, sizeof(path), "%.*s/meta.json", TB_LOCAL_ID_LEN, id);
	/* No meta.json: half made or being removed. */
	if (tb_local_meta_read(L->root_fd, path, &m) != 0 ||
	    m.deadline <= now ||
	    (m.isolation[0] &&
	     strcmp(m.isolation, L->bwrap ? "bwrap" : "none")))
		return 0;
	err = tb_local_owner_read(L, id, who, &created);
	if (err == ENOENT) {
		who[0] = '\0';
	} else if (err) {
		snprintf(msg, sizeof(msg),
		         "list: sandbox %.*s left out: its owner record is %s",
		         TB_LOCAL_ID_LEN, id,
		         err == EPROTO ? "malformed" : strerror(err));
		L->host->log(TASKBOX_LOG_WARN, TB_LOCAL_NAME, msg);
		return 0;
	}
	if (owner && strcmp(owner, who))
		return 0;
	info_fill(info, id, who, created, m.created, m.deadline);
	return 1;
}

int tb_local_list(void *instance, const char *owner, taskbox_list_fn each,
                  void *arg, char *errbuf, size_t errlen)
{
	struct tb_local *L = instance;
	struct taskbox_sandbox_info info;
	struct dirent *e;
	time_t now = time(NULL);
	int fd, err = 0;
	DIR *d;

	if (!each) {
		tb_local_err(errbuf, errlen, "list: each must not be NULL");
		return TASKBOX_E_INVALID;
	}
	fd = openat(L->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		err = errno;
		if (fd >= 0)
			close(fd);
		tb_local_err(errbuf, errlen, "list: cannot read %s: %s",
		             L->root, strerror(err));
		return tb_local_errno_status(err);
	}
	for (;;) {
		errno = 0;
		if (!(e = readdir(d))) {
			err = errno;
			break;
		}
		if (tb_local_id_valid(e->d_name) &&
		    list_one(L, e->d_name, owner, now, &info) &&
		    each(arg, &info))
			break;
	}
	closedir(d);
	if (err) {
		tb_local_err(errbuf, errlen, "list: cannot read %s: %s",
		             L->root, strerror(err));
		return TASKBOX_E_IO;
	}
	return TASKBOX_OK;
}
