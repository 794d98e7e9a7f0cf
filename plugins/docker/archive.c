/* docker provider: files through the archive endpoint. Reads stream the
 * engine's tar and keep only the requested window; writes upload a small
 * generated tar. Paths under /proc are read through exec instead, since
 * engines serve procfs files as empty archives or not at all. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker.h"

char *tb_dk_resolve(const struct tb_dk_conn *c, const char *path)
{
	size_t n;
	char *out;

	if (path[0] == '/')
		return strdup(path);
	n = strlen(c->home) + strlen(path) + 2;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%s%s%s", c->home,
		         c->home[strlen(c->home) - 1] == '/' ? "" : "/", path);
	return out;
}

/* One GET of the archive of path into f (set up as for fetch_begin). */
static int fetch_archive(struct tb_dk *dk, const char *id, const char *path,
                         struct tb_dk_fetch *f, char *errbuf, size_t errlen)
{
	CURLcode rc;
	int code = tb_dk_fetch_begin(dk, id, path, f, errbuf, errlen);

	if (code == TASKBOX_OK)
		code = tb_dk_perform_all(dk, &f->h, &rc, 1, NULL, NULL, errbuf,
		                         errlen);
	if (code != TASKBOX_OK) {
		if (f->h)
			curl_easy_cleanup(f->h);
		f->h = NULL;
		tb_tar_reader_free(&f->t);
		return code;
	}
	return tb_dk_fetch_end(dk, path, f, rc, errbuf, errlen);
}

/* Follows symlinks (up to TB_DK_MAX_LINK_HOPS) and fills f for the final
 * file. free_buf releases f->buf with the allocator that made it. */
static int fetch_file(struct tb_dk *dk, const char *id, const char *path,
                      struct tb_dk_fetch *f, void (*free_buf)(void *),
                      char *errbuf, size_t errlen)
{
	struct tb_dk_fetch proto = *f;
	char *cur = strdup(path), *next;
	int code = TASKBOX_OK;

	for (int hop = 0; cur; hop++) {
		*f = proto;
		code = fetch_archive(dk, id, cur, f, errbuf, errlen);
		if (code != TASKBOX_OK || f->t.kind != TB_TAR_LINK)
			break;
		if (hop == TB_DK_MAX_LINK_HOPS) {
			code = tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
			                  "%s: too many symbolic links", path);
			break;
		}
		next = tb_dk_link_next(cur, f->t.link);
		free(cur);
		cur = next;
	}
	if (!cur && code == TASKBOX_OK)
		code = tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	free(cur);
	if (code != TASKBOX_OK && f->buf) {
		free_buf(f->buf);
		f->buf = NULL;
	}
	return code;
}

int tb_dk_read_small(struct tb_dk *dk, const char *id, const char *path,
                     size_t max, char **out, size_t *out_len, char *errbuf,
                     size_t errlen)
{
	struct tb_dk_fetch f;
	int code;

	memset(&f, 0, sizeof(f));
	f.end = max + 1;
	f.alloc = malloc;
	code = fetch_file(dk, id, path, &f, free, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	if (f.t.size > max) {
		free(f.buf);
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "%s is larger than %zu bytes", path, max);
	}
	*out = malloc(f.len + 1);
	if (!*out) {
		free(f.buf);
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	}
	if (f.len)
		memcpy(*out, f.buf, f.len);
	(*out)[f.len] = '\0';
	*out_len = f.len;
	free(f.buf);
	return TASKBOX_OK;
}

int tb_dk_is_proc(const char *full)
{
	return !strcmp(full, "/proc") || !strncmp(full, "/proc/", 6);
}

/* /proc files through `cat`: sizes there are unknowable in advance. */
int tb_dk_read_proc(struct tb_dk_conn *c, const char *path, uint64_t offset,
                    size_t length, struct taskbox_buf *data,
                    uint64_t *file_size, char *errbuf, size_t errlen)
{
	const struct taskbox_host *host = c->dk->host;
	const char *argv[] = {"cat", "--", path, NULL};
	struct taskbox_exec_result res;
	uint64_t limit = offset + length;
	size_t n;
	int code;

	memset(&res, 0, sizeof(res));
	res.struct_size = sizeof(res);
	if (limit < offset || limit > (64u << 20))
		limit = 64u << 20;
	code = tb_dk_exec_simple(c, argv, 10000, (size_t)limit, &res, errbuf,
	                         errlen);
	if (code == TASKBOX_OK && res.exit_code != 0)
		code = tb_dk_fail(
		    strstr(res.err.data ? (char *)res.err.data : "", "No such")
		        ? TASKBOX_E_NOT_FOUND
		        : TASKBOX_E_IO,
		    errbuf, errlen, "cannot read %s: %.*s", path,
		    (int)(res.err.len > 200 ? 200 : res.err.len),
		    res.err.data ? (char *)res.err.data : "");
	if (code == TASKBOX_OK) {
		*file_size = res.out_truncated ? UINT64_MAX : res.out.len;
		n = offset < res.out.len ? res.out.len - (size_t)offset : 0;
		n = n < length ? n : length;
		data->data = n ? host->alloc(n) : NULL;
		data->len = n;
		if (n && !data->data)
			code = tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen,
			                  "no memory");
		else if (n)
			memcpy(data->data, res.out.data + offset, n);
	}
	host->free(res.out.data);
	host->free(res.err.data);
	return code;
}

/* read_file once, on c as it is. */
static int read_once(struct tb_dk_conn *c, const char *path, uint64_t offset,
                     size_t length, struct taskbox_buf *data,
                     uint64_t *file_size, char *errbuf, size_t errlen)
{
	struct tb_dk_fetch f;
	char *full;
	int code;

	full = tb_dk_resolve(c, path);
	if (!full)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	if (tb_dk_is_proc(full)) {
		code = tb_dk_read_proc(c, full, offset, length, data, file_size,
		                       errbuf, errlen);
		free(full);
		return code;
	}
	memset(&f, 0, sizeof(f));
	f.offset = offset;
	f.end = offset + length < offset ? UINT64_MAX : offset + length;
	f.alloc = c->dk->host->alloc;
	code = fetch_file(c->dk, c->id, full, &f, c->dk->host->free, errbuf,
	                  errlen);
	free(full);
	if (code == TASKBOX_E_NOT_FOUND &&
	    tb_dk_container_state(c->dk, c->id) == TB_DK_MISSING)
		code = tb_dk_fail(TASKBOX_E_GONE, errbuf, errlen,
		                  "sandbox %.12s was removed", c->id);
	if (code != TASKBOX_OK)
		return code;
	*file_size = f.t.size;
	data->data = f.len ? f.buf : NULL;
	data->len = f.len;
	if (!f.len && f.buf)
		c->dk->host->free(f.buf);
	return TASKBOX_OK;
}

int tb_dk_read_file(void *conn, const char *path, uint64_t offset,
                    size_t length, struct taskbox_buf *data,
                    uint64_t *file_size, char *errbuf, size_t errlen)
{
	struct tb_dk_conn *c = conn;
	int code;

	data->data = NULL;
	data->len = 0;
	if (!path || !*path)
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "read_file: empty path");
	code =
	    read_once(c, path, offset, length, data, file_size, errbuf, errlen);
	if (code != TASKBOX_OK && tb_dk_recheck(c, &code, errbuf, errlen))
		code = read_once(c, path, offset, length, data, file_size,
		                 errbuf, errlen);
	return code;
}

static int put_tar(struct tb_dk *dk, const char *id, const char *dir,
                   struct tb_tar_writer *w, char *errbuf, size_t errlen)
{
	struct tb_dk_resp r;
	char *esc, path[4200], what[300];
	int code;

	esc = tb_dk_escape(dir);
	if (!esc)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	snprintf(path, sizeof(path), "/containers/%s/archive?path=%s", id, esc);
	curl_free(esc);
	code = tb_dk_request(dk, "PUT", path, "application/x-tar", w->buf,
	                     w->len, &r, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	if (r.status != 200) {
		snprintf(what, sizeof(what), "cannot write under %.200s", dir);
		code = tb_dk_http_error(&r, what, errbuf, errlen);
	}
	tb_dk_resp_free(&r);
	return code;
}

int tb_dk_put_file(struct tb_dk *dk, const char *id, const char *dir,
                   const char *name, const void *data, size_t len,
                   uint32_t mode, long uid, long gid, char *errbuf,
                   size_t errlen)
{
	struct tb_tar_writer w = {0};
	int code;

	if (tb_tar_add(&w, name, 0, mode, uid, gid, data, len) ||
	    tb_tar_finish(&w))
		code = tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	else
		code = put_tar(dk, id, dir, &w, errbuf, errlen);
	free(w.buf);
	return code;
}

/* 1 when path exists in the container, 0 when not, <0 on failure. */
static int exists(struct tb_dk *dk, const char *id, const char *path, int *code,
                  char *errbuf, size_t errlen)
{
	struct tb_dk_resp r;
	char *esc, url[4200];

	esc = tb_dk_escape(path);
	if (!esc) {
		*code =
		    tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
		return -1;
	}
	snprintf(url, sizeof(url), "/containers/%s/archive?path=%s", id, esc);
	curl_free(esc);
	*code =
	    tb_dk_request(dk, "HEAD", url, NULL, NULL, 0, &r, errbuf, errlen);
	if (*code != TASKBOX_OK)
		return -1;
	tb_dk_resp_free(&r);
	if (r.status == 200)
		return 1;
	if (r.status == 404)
		return 0;
	*code = tb_dk_http_error(&r, path, errbuf, errlen);
	return -1;
}

/* write_file once, on c as it is. */
static int write_once(struct tb_dk_conn *c, const char *path,
                      const unsigned char *data, size_t len, uint32_t mode,
                      char *errbuf, size_t errlen)
{
	struct tb_tar_writer w = {0};
	char *full, *base, *anc;
	size_t alen;
	int code = TASKBOX_OK, e;

	full = tb_dk_resolve(c, path);
	if (!full)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	base = strrchr(full, '/') + 1;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		free(full);
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "write_file: %s names no file", path);
	}
	/* The deepest existing ancestor gets the upload; the directories
	 * below it go into the tar, owned by the sandbox's user. */
	anc = strdup(full);
	if (!anc) {
		free(full);
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	}
	alen = (size_t)(base - full) - 1;
	for (;;) {
		anc[alen] = '\0';
		if (!alen) {
			strcpy(anc, "/");
			break;
		}
		e = exists(c->dk, c->id, anc, &code, errbuf, errlen);
		if (e < 0)
			goto out;
		if (e)
			break;
		while (alen && anc[alen] != '/')
			alen--;
	}
	{
		const char *rel = full + alen + 1;
		for (const char *p = strchr(rel, '/'); p;
		     p = strchr(p + 1, '/')) {
			char *dir = strndup(rel, (size_t)(p - rel) + 1);
			if (!dir || tb_tar_add(&w, dir, 1, 0755, c->uid, c->gid,
			                       NULL, 0)) {
				free(dir);
				code = tb_dk_fail(TASKBOX_E_NOMEM, errbuf,
				                  errlen, "no memory");
				goto out;
			}
			free(dir);
		}
		if (tb_tar_add(&w, rel, 0, mode, c->uid, c->gid, data, len) ||
		    tb_tar_finish(&w)) {
			code = tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen,
			                  "no memory");
			goto out;
		}
	}
	code = put_tar(c->dk, c->id, anc, &w, errbuf, errlen);
out:
	if (code == TASKBOX_E_NOT_FOUND &&
	    tb_dk_container_state(c->dk, c->id) == TB_DK_MISSING)
		code = tb_dk_fail(TASKBOX_E_GONE, errbuf, errlen,
		                  "sandbox %.12s was removed", c->id);
	free(w.buf);
	free(anc);
	free(full);
	return code;
}

int tb_dk_write_file(void *conn, const char *path, const unsigned char *data,
                     size_t len, uint32_t mode, char *errbuf, size_t errlen)
{
	struct tb_dk_conn *c = conn;
	int code;

	if (!path || !*path)
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "write_file: empty path");
	code = write_once(c, path, data, len, mode, errbuf, errlen);
	if (code != TASKBOX_OK && tb_dk_recheck(c, &code, errbuf, errlen))
		code = write_once(c, path, data, len, mode, errbuf, errlen);
	return code;
}
