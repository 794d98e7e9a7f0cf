/* The local provider's sandboxes: ids, metadata, create, connect, renew and
 * destroy. The on-disk layout is described in local_int.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "local_int.h"

#define META "meta.json"
#define TEMPLATE_BASE "base"

int tb_local_id_valid(const char *s)
{
	size_t n = 0;

	if (!s)
		return 0;
	for (; s[n]; n++)
		if (n >= TB_LOCAL_ID_LEN || !((s[n] >= '0' && s[n] <= '9') ||
		                              (s[n] >= 'a' && s[n] <= 'f')))
			return 0;
	return n == TB_LOCAL_ID_LEN;
}

/* Writes 2*n lowercase hex digits of n random bytes and a NUL into out. */
static int random_hex(char *out, size_t n)
{
	unsigned char raw[32];
	static const char digits[] = "0123456789abcdef";

	if (n > sizeof(raw) || getrandom(raw, n, 0) != (ssize_t)n)
		return errno ? errno : EIO;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[raw[i] >> 4];
		out[2 * i + 1] = digits[raw[i] & 15];
	}
	out[2 * n] = '\0';
	return 0;
}

int tb_local_meta_read(int dirfd, const char *path, struct tb_local_meta *m)
{
	char buf[512];
	ssize_t n;
	int fd, rc = EPROTO;
	json_t *obj, *created, *deadline, *tmpl, *iso;
	struct stat st;

	fd = openat(dirfd, path ? path : META,
	            O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0 || fstat(fd, &st) != 0) {
		rc = errno;
		close(fd);
		return rc;
	}
	close(fd);
	m->ino = st.st_ino;
	m->mtime = st.st_mtim;
	obj = json_loadb(buf, (size_t)n, 0, NULL);
	created = json_object_get(obj, "created");
	deadline = json_object_get(obj, "deadline");
	tmpl = json_object_get(obj, "template");
	iso = json_object_get(obj, "isolation");
	if (json_is_integer(created) && json_is_integer(deadline) &&
	    json_is_string(tmpl) &&
	    json_string_length(tmpl) < sizeof(m->template_name) &&
	    (!iso || (json_is_string(iso) &&
	              json_string_length(iso) < sizeof(m->isolation)))) {
		m->created = json_integer_value(created);
		m->deadline = json_integer_value(deadline);
		snprintf(m->template_name, sizeof(m->template_name), "%s",
		         json_string_value(tmpl));
		snprintf(m->isolation, sizeof(m->isolation), "%s",
		         iso ? json_string_value(iso) : "");
		rc = 0;
	}
	json_decref(obj);
	return rc;
}

/* The reaper (reaper.c) reads the deadline from this one line with shell
 * pattern matching, so keep "deadline": followed by digits. */
int tb_local_meta_write(int dirfd, const struct tb_local_meta *m)
{
	char tmp[32] = ".meta.", line[256];
	int fd, len, rc = 0;

	if ((rc = random_hex(tmp + 6, 8)))
		return rc;
	len = snprintf(line, sizeof(line),
	               "{\"format\":1,\"created\":%lld,\"deadline\":%lld,"
	               "\"template\":\"%s\"%s%s%s}\n",
	               (long long)m->created, (long long)m->deadline,
	               m->template_name,
	               m->isolation[0] ? ",\"isolation\":\"" : "", m->isolation,
	               m->isolation[0] ? "\"" : "");
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	if (write(fd, line, (size_t)len) != len || fdatasync(fd) != 0)
		rc = errno ? errno : EIO;
	if (close(fd) != 0 && !rc)
		rc = errno;
	if (!rc && renameat(dirfd, tmp, dirfd, META) != 0)
		rc = errno;
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

int tb_local_remove(struct tb_local *L, const char *id, const char *name)
{
	char gone[80];
	int fd, rc;

	tb_local_idle_drop(L, id);
	if (!strcmp(name, id)) {
		char suffix[17];
		if ((rc = random_hex(suffix, 8)))
			return rc;
		snprintf(gone, sizeof(gone), ".gone-%s-%s", id, suffix);
		if (renameat(L->root_fd, id, L->root_fd, gone) != 0)
			return errno;
		name = gone;
	}
	fd = openat(L->root_fd, name,
	            O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		tb_local_reaper_stop(fd, id);
		close(fd);
	}
	tb_local_cgroup_remove(L, id);
	tb_local_kill_tree(L->root, id);
	rc = tb_local_rmtree(L->root_fd, name);
	if (rc) {
		/* Deeper than rmtree goes: rm handles any depth. */
		char *path = NULL;
		struct stat st;
		if (asprintf(&path, "%s/%s", L->root, name) > 0) {
			char *argv[] = {"rm", "-rf", "--one-file-system",
			                "--", path,  NULL};
			char *envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
			tb_local_run_quiet("/bin/rm", argv, envp, 0);
			if (fstatat(L->root_fd, name, &st,
			            AT_SYMLINK_NOFOLLOW) != 0 &&
			    errno == ENOENT)
				rc = 0;
		}
		free(path);
	}
	/* A command an open connection spawned during the removal. */
	tb_local_kill_tree(L->root, id);
	if (!rc)
		tb_local_owner_remove(L, id);
	return rc;
}

int tb_local_create(void *instance, const struct taskbox_create_req *req,
                    char *id, char *errbuf, size_t errlen)
{
	struct tb_local *L = instance;
	struct tb_local_meta m = {0};
	int dirfd = -1, err = 0, tries = 0;
	const char *tmpl = req->template_name, *owner = NULL, *bad;

	if (tmpl && strcmp(tmpl, TEMPLATE_BASE)) {
		tb_local_err(errbuf, errlen,
		             "template '%.64s' not found; the local provider "
		             "offers: %s",
		             tmpl, TEMPLATE_BASE);
		return TASKBOX_E_NOT_FOUND;
	}
	if (req->struct_size >=
	    offsetof(struct taskbox_create_req, owner) + sizeof(req->owner))
		owner = req->owner;
	if (owner && (bad = tb_local_owner_check(owner))) {
		tb_local_err(errbuf, errlen,
		             "create: %s (an owner is 1..255 bytes of UTF-8 "
		             "without control characters)",
		             bad);
		id[0] = '\0';
		return TASKBOX_E_INVALID;
	}
	do {
		if ((err = random_hex(id, TB_LOCAL_ID_LEN / 2)))
			goto fail;
		if (mkdirat(L->root_fd, id, 0700) == 0)
			break;
		err = errno;
	} while (err == EEXIST && ++tries < 8);
	if (err)
		goto fail;
	dirfd = openat(L->root_fd, id, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || mkdirat(dirfd, "home", 0700) != 0 ||
	    mkdirat(dirfd, "tmp", 0700) != 0) {
		err = errno;
		goto fail_remove;
	}
	m.created = time(NULL);
	m.deadline = m.created + tb_local_lifetime(L, req->lifetime_s);
	strcpy(m.template_name, TEMPLATE_BASE);
	strcpy(m.isolation, L->bwrap ? "bwrap" : "none");
	/* The owner record first: a sandbox with a meta.json has one. */
	if ((err =
	         tb_local_owner_write(L, id, owner ? owner : "", m.created)) ||
	    (err = tb_local_meta_write(dirfd, &m)))
		goto fail_remove;
	if ((err = tb_local_cgroup_create(L, id))) {
		char msg[160];
		snprintf(msg, sizeof(msg),
		         "sandbox %s: no cgroup of its own (%s); destroy "
		         "falls back to the process tree",
		         id, strerror(err));
		L->host->log(TASKBOX_LOG_WARN, TB_LOCAL_NAME, msg);
	}
	if ((err = tb_local_reaper_start(L, id)))
		goto fail_remove;
	close(dirfd);
	return TASKBOX_OK;
fail_remove:
	if (dirfd >= 0)
		close(dirfd);
	tb_local_remove(L, id, id);
fail:
	tb_local_err(errbuf, errlen, "cannot create a sandbox under %s: %s",
	             L->root, strerror(err));
	id[0] = '\0';
	return tb_local_errno_status(err);
}

/* Two instances may share a root: a sandbox is reached only by an
 * instance of the isolation it was made with, never unconfined through
 * another. Nonzero (with the message) when m says otherwise; a sandbox
 * made before the isolation was recorded is reached by any. */
static int wrong_isolation(const struct tb_local *L, const char *id,
                           const struct tb_local_meta *m, char *errbuf,
                           size_t errlen)
{
	const char *mine = L->bwrap ? "bwrap" : "none";

	if (!m->isolation[0] || !strcmp(m->isolation, mine))
		return 0;
	tb_local_err(errbuf, errlen,
	             "sandbox %s was made with isolation \"%s\"; this "
	             "instance's isolation is \"%s\": reach it through an "
	             "instance with the same isolation",
	             id, m->isolation, mine);
	return 1;
}

/* wrong_isolation for the sandbox id, read from its meta.json (a sandbox
 * whose meta.json cannot be read is not refused here). */
static int isolation_differs(const struct tb_local *L, const char *id,
                             char *errbuf, size_t errlen)
{
	struct tb_local_meta m;
	char path[TB_LOCAL_ID_LEN + 16];

	snprintf(path, sizeof(path), "%s/%s", id, META);
	return tb_local_meta_read(L->root_fd, path, &m) == 0 &&
	       wrong_isolation(L, id, &m, errbuf, errlen);
}

int tb_local_connect(void *instance, const char *sandbox_id, void **conn,
                     char *errbuf, size_t errlen)
{
	struct tb_local *L = instance;
	struct tb_local_conn *c;
	struct tb_local_meta m;
	int err;

	if (!tb_local_id_valid(sandbox_id)) {
		tb_local_err(
		    errbuf, errlen,
		    "malformed sandbox id: the local provider's ids are "
		    "32 lowercase hex digits");
		return TASKBOX_E_INVALID;
	}
	if ((c = tb_local_idle_take(L, sandbox_id))) {
		*conn = c;
		return TASKBOX_OK;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		tb_local_err(errbuf, errlen, "out of memory");
		return TASKBOX_E_NOMEM;
	}
	c->inst = L;
	c->home_fd = -1;
	memcpy(c->id, sandbox_id, TB_LOCAL_ID_LEN + 1);
	snprintf(c->marker, sizeof(c->marker), "%s=%s", TB_LOCAL_MARKER, c->id);
	snprintf(c->meta_path, sizeof(c->meta_path), "%s/%s", c->id, META);
	c->dir_fd = openat(L->root_fd, c->id,
	                   O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = c->dir_fd < 0 ? errno : tb_local_meta_read(c->dir_fd, NULL, &m);
	if (err) {
		if (err == ENOENT || err == ENOTDIR) {
			tb_local_err(errbuf, errlen, "no sandbox %s", c->id);
			tb_local_conn_free(c);
			return TASKBOX_E_NOT_FOUND;
		}
		goto fail;
	}
	if (wrong_isolation(L, c->id, &m, errbuf, errlen)) {
		tb_local_conn_free(c);
		return TASKBOX_E_PERMISSION;
	}
	if (m.deadline <= time(NULL)) {
		tb_local_conn_free(c);
		tb_local_remove(L, sandbox_id, sandbox_id);
		tb_local_err(errbuf, errlen,
		             "sandbox %s expired and was removed", sandbox_id);
		return TASKBOX_E_GONE;
	}
	/* What the first op's liveness check compares against: it re-reads
	 * meta.json only when the file was replaced since. */
	c->deadline = m.deadline;
	c->created = m.created;
	c->meta_ino = m.ino;
	c->meta_mtime = m.mtime;
	/* Under bubblewrap, a home a command replaced with a link is refused:
	 * read_file and write_file would reach the link's target on the host.
	 */
	c->home_fd = openat(c->dir_fd, "home",
	                    O_PATH | O_DIRECTORY | O_CLOEXEC |
	                        (L->bwrap ? O_NOFOLLOW : 0));
	if (c->home_fd < 0) {
		err = errno;
		goto fail;
	}
	c->cgroup = tb_local_cgroup_path(L, c->id);
	if (asprintf(&c->dir, "%s/%s", L->root, c->id) < 0 ||
	    asprintf(&c->home, "%s/%s/home", L->root, c->id) < 0 ||
	    asprintf(&c->meta, "%s/%s/" META, L->root, c->id) < 0) {
		err = ENOMEM;
		goto fail;
	}
	*conn = c;
	return TASKBOX_OK;
fail:
	tb_local_err(errbuf, errlen, "cannot open sandbox %s: %s", c->id,
	             err == EPROTO ? "its meta.json is damaged"
	                           : strerror(err));
	tb_local_conn_free(c);
	return err == EPROTO ? TASKBOX_E_IO : tb_local_errno_status(err);
}

void tb_local_close(void *conn)
{
	if (conn)
		tb_local_idle_put(conn);
}

void tb_local_conn_free(struct tb_local_conn *c)
{
	if (!c)
		return;
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	if (c->home_fd >= 0)
		close(c->home_fd);
	tb_local_kept_close(c);
	free(c->dir);
	free(c->home);
	free(c->meta);
	free(c->cgroup);
	free(c);
}

int tb_local_meta_unchanged(const struct tb_local_conn *c, int *err)
{
	struct stat st;

	*err = 0;
	if (fstatat(c->inst->root_fd, c->meta_path, &st, AT_SYMLINK_NOFOLLOW)) {
		*err = errno;
		return 0;
	}
	return st.st_ino == c->meta_ino &&
	       st.st_mtim.tv_sec == c->meta_mtime.tv_sec &&
	       st.st_mtim.tv_nsec == c->meta_mtime.tv_nsec;
}

int tb_local_conn_alive(struct tb_local_conn *c, char *errbuf, size_t errlen)
{
	struct tb_local_meta m;
	int err;

	int same = tb_local_meta_unchanged(c, &err);

	if (!err && !same) {
		/* Renewed (here or elsewhere) since we last looked. */
		err = tb_local_meta_read(c->inst->root_fd, c->meta_path, &m);
		if (!err) {
			c->deadline = m.deadline;
			c->meta_ino = m.ino;
			c->meta_mtime = m.mtime;
		}
	}
	if (err == ENOENT || err == ENOTDIR) {
		tb_local_err(errbuf, errlen, "sandbox %s was destroyed", c->id);
		return TASKBOX_E_GONE;
	}
	if (err) {
		tb_local_err(errbuf, errlen,
		             "sandbox %s: cannot read its "
		             "meta.json: %s",
		             c->id,
		             err == EPROTO ? "malformed" : strerror(err));
		return TASKBOX_E_IO;
	}
	if (time(NULL) < c->deadline)
		return TASKBOX_OK;
	tb_local_remove(c->inst, c->id, c->id);
	tb_local_err(errbuf, errlen, "sandbox %s expired and was removed",
	             c->id);
	return TASKBOX_E_GONE;
}

int tb_local_conn_current(struct tb_local_conn *c, char *errbuf, size_t errlen)
{
	return time(NULL) < c->deadline
	           ? TASKBOX_OK
	           : tb_local_conn_alive(c, errbuf, errlen);
}

int tb_local_conn_gone(struct tb_local_conn *c)
{
	struct stat st;

	return fstatat(c->inst->root_fd, c->meta_path, &st,
	               AT_SYMLINK_NOFOLLOW) != 0 &&
	       errno == ENOENT;
}

int tb_local_renew(void *conn, uint32_t lifetime_s, char *errbuf, size_t errlen)
{
	struct tb_local_conn *c = conn;
	struct tb_local_meta m;
	int rc, err;

	if ((rc = tb_local_conn_alive(c, errbuf, errlen)))
		return rc;
	if ((err = tb_local_meta_read(c->inst->root_fd, c->meta_path, &m)))
		goto fail;
	int64_t old = m.deadline;
	m.deadline =
	    (int64_t)time(NULL) + tb_local_lifetime(c->inst, lifetime_s);
	if ((err = tb_local_meta_write(c->dir_fd, &m)))
		goto fail;
	if (m.deadline < old) {
		/* The reaper may be asleep past the new deadline. */
		tb_local_reaper_stop(c->dir_fd, c->id);
		tb_local_reaper_start(c->inst, c->id);
	}
	c->deadline = m.deadline;
	c->meta_ino = 0; /* the next op re-reads the new file */
	return TASKBOX_OK;
fail:
	if (err == ENOENT) {
		tb_local_err(errbuf, errlen, "sandbox %s was destroyed", c->id);
		return TASKBOX_E_GONE;
	}
	tb_local_err(errbuf, errlen, "cannot renew sandbox %s: %s", c->id,
	             err == EPROTO ? "its meta.json is damaged"
	                           : strerror(err));
	return err == EPROTO ? TASKBOX_E_IO : tb_local_errno_status(err);
}

int tb_local_destroy(void *instance, const char *sandbox_id, char *errbuf,
                     size_t errlen)
{
	struct tb_local *L = instance;
	int err;

	if (!tb_local_id_valid(sandbox_id)) {
		tb_local_err(
		    errbuf, errlen,
		    "malformed sandbox id: the local provider's ids are "
		    "32 lowercase hex digits");
		return TASKBOX_E_INVALID;
	}
	if (isolation_differs(L, sandbox_id, errbuf, errlen))
		return TASKBOX_E_PERMISSION;
	err = tb_local_remove(L, sandbox_id, sandbox_id);
	if (err == ENOENT) {
		tb_local_err(errbuf, errlen, "no sandbox %s", sandbox_id);
		return TASKBOX_E_NOT_FOUND;
	}
	if (err) {
		tb_local_err(errbuf, errlen, "cannot remove sandbox %s: %s",
		             sandbox_id, strerror(err));
		return tb_local_errno_status(err);
	}
	return TASKBOX_OK;
}
