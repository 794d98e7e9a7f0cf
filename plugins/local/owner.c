/* The owner record of a local sandbox: <root>/.owner-<id>, one line of JSON,
 * {"format":1,"owner":"...","created":T}, written once by create (before
 * meta.json, so a sandbox that lists or connects has it) and removed with
 * the sandbox. It lives in the root, outside the sandbox's directory: under
 * bubblewrap the root is an empty tmpfs with only the sandbox's own
 * directory bound into it, so no command of the sandbox sees the record,
 * let alone writes it. Under isolation "none" commands run as the server's
 * user and can rewrite it (README.md says so). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "local_int.h"

#define PREFIX ".owner-"
#define RECORD_MAX 2048

/* The record's name below the root, or with suffix ".new" its temp file. */
static void record_name(char out[TB_LOCAL_OWNER_NAME_MAX], const char *id,
                        const char *suffix)
{
	snprintf(out, TB_LOCAL_OWNER_NAME_MAX, PREFIX "%s%s", id, suffix);
}

const char *tb_local_owner_check(const char *owner)
{
	size_t n = strlen(owner);
	json_t *s;

	if (n >= TASKBOX_OWNER_MAX)
		return "owner is longer than 255 bytes";
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)owner[i];
		/* C0, DEL, and C1 (U+0080..U+009F: 0xC2 0x80..0x9F). */
		if (b < 0x20 || b == 0x7f ||
		    (b == 0xc2 && i + 1 < n &&
		     (unsigned char)owner[i + 1] >= 0x80 &&
		     (unsigned char)owner[i + 1] <= 0x9f))
			return "owner holds a control character";
	}
	s = json_stringn(owner, n); /* NULL when not valid UTF-8 */
	if (!s)
		return "owner is not valid UTF-8";
	json_decref(s);
	return NULL;
}

int tb_local_owner_write(struct tb_local *L, const char *id, const char *owner,
                         int64_t created)
{
	char tmp[TB_LOCAL_OWNER_NAME_MAX], name[TB_LOCAL_OWNER_NAME_MAX];
	json_t *obj;
	char *line = NULL;
	size_t len;
	int fd, rc = 0;

	obj = json_pack("{s:i, s:s, s:I}", "format", 1, "owner", owner,
	                "created", (json_int_t)created);
	if (obj)
		line = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	if (!line)
		return ENOMEM;
	len = strlen(line);
	line[len++] = '\n'; /* over the NUL: written by length */
	record_name(tmp, id, ".new");
	record_name(name, id, "");
	fd = openat(L->root_fd, tmp,
	            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
	if (fd < 0) {
		rc = errno;
		free(line);
		return rc;
	}
	if (write(fd, line, len) != (ssize_t)len || fdatasync(fd) != 0)
		rc = errno ? errno : EIO;
	if (close(fd) != 0 && !rc)
		rc = errno;
	if (!rc && renameat(L->root_fd, tmp, L->root_fd, name) != 0)
		rc = errno;
	if (rc)
		unlinkat(L->root_fd, tmp, 0);
	free(line);
	return rc;
}

int tb_local_owner_read(struct tb_local *L, const char *id,
                        char owner[TASKBOX_OWNER_MAX], int64_t *created)
{
	char name[TB_LOCAL_OWNER_NAME_MAX], buf[RECORD_MAX];
	struct stat st;
	json_t *obj, *o, *c;
	ssize_t n;
	int fd, rc = EPROTO;

	record_name(name, id, "");
	/* O_NONBLOCK: a FIFO put in its place must not hang the reader. */
	fd = openat(L->root_fd, name,
	            O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return EPROTO;
	}
	n = read(fd, buf, sizeof buf);
	rc = n < 0 ? errno : EPROTO;
	close(fd);
	if (n < 0)
		return rc;
	obj = json_loadb(buf, (size_t)n, 0, NULL);
	o = json_object_get(obj, "owner");
	c = json_object_get(obj, "created");
	if (json_is_string(o) && json_is_integer(c) &&
	    strlen(json_string_value(o)) == json_string_length(o) &&
	    !tb_local_owner_check(json_string_value(o))) {
		snprintf(owner, TASKBOX_OWNER_MAX, "%s", json_string_value(o));
		*created = json_integer_value(c);
		rc = 0;
	}
	json_decref(obj);
	return rc;
}

void tb_local_owner_remove(struct tb_local *L, const char *id)
{
	char name[TB_LOCAL_OWNER_NAME_MAX];

	record_name(name, id, "");
	unlinkat(L->root_fd, name, 0);
	record_name(name, id, ".new");
	unlinkat(L->root_fd, name, 0);
}

void tb_local_owner_sweep(struct tb_local *L, const char *name)
{
	char id[TB_LOCAL_ID_LEN + 1];
	struct stat st;
	size_t n = strlen(PREFIX);

	if (strncmp(name, PREFIX, n) || strlen(name) < n + TB_LOCAL_ID_LEN)
		return;
	memcpy(id, name + n, TB_LOCAL_ID_LEN);
	id[TB_LOCAL_ID_LEN] = '\0';
	if (!tb_local_id_valid(id) ||
	    (strcmp(name + n + TB_LOCAL_ID_LEN, "") &&
	     strcmp(name + n + TB_LOCAL_ID_LEN, ".new")))
		return;
	/* create makes the directory first: without it, the record is left
	 * from a sandbox removed without us (its reaper removes both). */
	if (fstatat(L->root_fd, id, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
	    errno == ENOENT)
		unlinkat(L->root_fd, name, 0);
}
