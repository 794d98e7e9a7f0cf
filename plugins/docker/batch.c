/* docker provider: read_files. Files that share a directory are read with
 * one archive GET of it (dir_fetch.c), all directories at once; then the
 * other files' GETs go out at once, each on its own engine connection of
 * one pooled multi handle. A batch of one directory's files so costs about
 * one GET. Symbolic links are followed in further rounds, and /proc items
 * are read through exec (as read_file does) after the GETs. Each item ends
 * as read_file would: its window and size, or NOT_FOUND; any other failure
 * fails the batch naming the item's path. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker.h"

/* GETs in flight at once; a larger batch goes in several rounds. */
#define AT_ONCE 16

struct slot {
	struct taskbox_read_item *it;
	char *path; /* resolved; the link's target after a hop */
	int hops, pending, proc;
	struct tb_dk_fetch f;
};

/* Slots read with one GET of their directory. */
struct group {
	char *dir;
	struct slot *members[AT_ONCE];
	struct tb_dk_dir_item items[AT_ONCE];
	struct tb_dk_dir_fetch d;
};

/* Fails the batch for item it: the message names the item's path. */
static int item_failed(const struct taskbox_read_item *it, int code,
                       const char *why, char *errbuf, size_t errlen)
{
	if (strstr(why, it->path))
		return tb_dk_fail(code, errbuf, errlen, "%s", why);
	return tb_dk_fail(code, errbuf, errlen, "%s: %s", it->path, why);
}

/* Sets s's item from its finished fetch. Returns TASKBOX_OK when the item
 * has its status or needs another hop (s->pending), else the failure. */
static int settle(struct tb_dk_conn *c, struct slot *s, int code,
                  const char *why, char *errbuf, size_t errlen)
{
	const struct taskbox_host *host = c->dk->host;
	struct taskbox_read_item *it = s->it;
	char *next;

	if (code == TASKBOX_OK && s->f.t.kind == TB_TAR_LINK) {
		if (s->hops++ == TB_DK_MAX_LINK_HOPS)
			return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
			                  "%s: too many symbolic links",
			                  it->path);
		next = tb_dk_link_next(s->path, s->f.t.link);
		if (!next)
			return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen,
			                  "no memory");
		free(s->path);
		s->path = next;
		return TASKBOX_OK; /* still pending */
	}
	s->pending = 0;
	if (code == TASKBOX_OK) {
		it->status = TASKBOX_OK;
		it->file_size = s->f.t.size;
		it->data.data = s->f.len ? s->f.buf : NULL;
		it->data.len = s->f.len;
		if (!s->f.len)
			host->free(s->f.buf);
		s->f.buf = NULL;
		return TASKBOX_OK;
	}
	host->free(s->f.buf);
	s->f.buf = NULL;
	if (code == TASKBOX_E_NOT_FOUND) {
		it->status = TASKBOX_E_NOT_FOUND;
		return TASKBOX_OK;
	}
	return item_failed(it, code, why, errbuf, errlen);
}

/* One round: up to AT_ONCE pending slots' GETs at once. */
static int round_of_gets(struct tb_dk_conn *c, struct slot *slots, size_t count,
                         char *errbuf, size_t errlen)
{
	CURL *hs[AT_ONCE];
	CURLcode rcs[AT_ONCE];
	struct slot *on[AT_ONCE];
	char why[TASKBOX_ERRBUF_SIZE];
	size_t n = 0;
	int code = TASKBOX_OK, rc;

	for (size_t i = 0; i < count && n < AT_ONCE; i++) {
		struct slot *s = &slots[i];
		if (!s->pending || s->proc)
			continue;
		memset(&s->f, 0, sizeof(s->f));
		s->f.offset = s->it->offset;
		s->f.end = s->it->offset + s->it->length < s->it->offset
		               ? UINT64_MAX
		               : s->it->offset + s->it->length;
		s->f.alloc = c->dk->host->alloc;
		code = tb_dk_fetch_begin(c->dk, c->id, s->path, &s->f, errbuf,
		                         errlen);
		if (code != TASKBOX_OK)
			break;
		on[n] = s;
		hs[n++] = s->f.h;
	}
	if (code == TASKBOX_OK)
		code = tb_dk_perform_all(c->dk, hs, rcs, n, NULL, NULL, errbuf,
		                         errlen);
	for (size_t k = 0; k < n; k++) {
		struct slot *s = on[k];
		if (code != TASKBOX_OK) {
			/* The batch failed already: only release. */
			curl_easy_cleanup(s->f.h);
			s->f.h = NULL;
			tb_tar_reader_free(&s->f.t);
			tb_dk_resp_free(&s->f.err);
			c->dk->host->free(s->f.buf);
			s->f.buf = NULL;
			continue;
		}
		rc = tb_dk_fetch_end(c->dk, s->path, &s->f, rcs[k], why,
		                     sizeof(why));
		code = settle(c, s, rc, why, errbuf, errlen);
		if (code != TASKBOX_OK) {
			c->dk->host->free(s->f.buf);
			s->f.buf = NULL;
		}
	}
	return code;
}

/* Whether slot s may be read with its directory: a file's first path,
 * below the root directory. */
static int dir_eligible(const struct slot *s)
{
	const char *slash = strrchr(s->path, '/');

	return s->pending && !s->proc && !s->hops && slash &&
	       slash != s->path && slash[1];
}

/* Gathers the groups: two or more eligible slots with one directory. */
static size_t make_groups(struct slot *slots, size_t count,
                          struct group *groups, int *grouped)
{
	size_t ng = 0;

	for (size_t i = 0; i < count && ng < AT_ONCE; i++) {
		struct group *g = &groups[ng];
		size_t dlen, n = 0;
		if (grouped[i] || !dir_eligible(&slots[i]))
			continue;
		dlen = (size_t)(strrchr(slots[i].path, '/') - slots[i].path);
		for (size_t j = i; j < count && n < AT_ONCE; j++) {
			struct slot *s = &slots[j];
			int twice = 0;
			if (grouped[j] || !dir_eligible(s) ||
			    strncmp(s->path, slots[i].path, dlen) ||
			    strrchr(s->path, '/') != s->path + dlen)
				continue;
			/* A file asked for twice: the second on its own. */
			for (size_t k = 0; k < n; k++)
				twice |= !strcmp(g->items[k].name,
				                 s->path + dlen + 1);
			if (twice)
				continue;
			memset(&g->items[n], 0, sizeof(g->items[n]));
			g->items[n].name = s->path + dlen + 1;
			g->items[n].offset = s->it->offset;
			g->items[n].end =
			    s->it->offset + s->it->length < s->it->offset
			        ? UINT64_MAX
			        : s->it->offset + s->it->length;
			g->members[n++] = s;
		}
		if (n < 2 || !(g->dir = strndup(slots[i].path, dlen)))
			continue;
		for (size_t k = 0; k < n; k++)
			grouped[g->members[k] - slots] = 1;
		memset(&g->d, 0, sizeof(g->d));
		g->d.base = strrchr(g->dir, '/') + 1;
		g->d.items = g->items;
		g->d.n = n;
		ng++;
	}
	return ng;
}

/* Sets slot s from what its directory's archive held (complete: it was
 * read through). Returns TASKBOX_OK or the failure of the batch. */
static int settle_from_dir(struct tb_dk_conn *c, struct slot *s,
                           struct tb_dk_dir_item *di, int complete,
                           char *errbuf, size_t errlen)
{
	const struct taskbox_host *host = c->dk->host;
	char *next;

	if (!di->found || di->kind != TB_TAR_FILE) {
		host->free(di->buf);
		di->buf = NULL;
	}
	if (!di->found) {
		if (complete) {
			s->it->status = TASKBOX_E_NOT_FOUND;
			s->pending = 0;
		}
		return TASKBOX_OK; /* else read on its own */
	}
	switch (di->kind) {
	case TB_TAR_FILE:
		s->it->status = TASKBOX_OK;
		s->it->file_size = di->size;
		s->it->data.data = di->len ? di->buf : NULL;
		s->it->data.len = di->len;
		if (!di->len)
			host->free(di->buf);
		di->buf = NULL;
		s->pending = 0;
		return TASKBOX_OK;
	case TB_TAR_LINK:
		next = tb_dk_link_next(s->path, di->link);
		if (!next)
			return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen,
			                  "no memory");
		free(s->path);
		s->path = next;
		s->hops++;
		return TASKBOX_OK;
	case TB_TAR_DIR:
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "%s is a directory", s->path);
	default:
		return tb_dk_fail(TASKBOX_E_UNSUPPORTED, errbuf, errlen,
		                  "%s is not a regular file", s->path);
	}
}

/* One GET per directory shared by two or more items, all at once. */
static int round_of_dirs(struct tb_dk_conn *c, struct slot *slots, size_t count,
                         char *errbuf, size_t errlen)
{
	struct group *groups = calloc(AT_ONCE, sizeof(*groups));
	int *grouped = calloc(count ? count : 1, sizeof(int));
	CURL *hs[AT_ONCE];
	CURLcode rcs[AT_ONCE];
	size_t ng = 0, started = 0;
	int code = TASKBOX_OK;

	if (!groups || !grouped) {
		free(groups);
		free(grouped);
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	}
	ng = make_groups(slots, count, groups, grouped);
	for (; started < ng && code == TASKBOX_OK; started++) {
		groups[started].d.alloc = c->dk->host->alloc;
		code = tb_dk_dir_begin(c->dk, c->id, groups[started].dir,
		                       &groups[started].d, errbuf, errlen);
		hs[started] = groups[started].d.h;
	}
	if (code != TASKBOX_OK)
		started--;
	if (code == TASKBOX_OK && ng)
		code = tb_dk_perform_all(c->dk, hs, rcs, ng, NULL, NULL, errbuf,
		                         errlen);
	for (size_t g = 0; g < started; g++) {
		struct group *gr = &groups[g];
		int complete = tb_dk_dir_end(
		    &gr->d,
		    code == TASKBOX_OK ? rcs[g] : CURLE_ABORTED_BY_CALLBACK);
		for (size_t k = 0; k < gr->d.n; k++) {
			if (code != TASKBOX_OK) {
				c->dk->host->free(gr->items[k].buf);
				continue;
			}
			code = settle_from_dir(c, gr->members[k], &gr->items[k],
			                       complete, errbuf, errlen);
		}
	}
	for (size_t g = 0; g < ng; g++)
		free(groups[g].dir);
	free(groups);
	free(grouped);
	return code;
}

/* Makes the slots: each item's path resolved, procfs ones marked. */
static int make_slots(struct tb_dk_conn *c,
                      struct taskbox_read_item *const *items, size_t count,
                      struct slot *slots, char *errbuf, size_t errlen)
{
	size_t need =
	    offsetof(struct taskbox_read_item, file_size) + sizeof(uint64_t);

	for (size_t i = 0; i < count; i++) {
		struct taskbox_read_item *it = items[i];
		if (!it || it->struct_size < need)
			return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
			                  "read_files: item %zu is too old a "
			                  "struct",
			                  i);
		if (!it->path || !*it->path)
			return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
			                  "read_files: item %zu has an empty "
			                  "path",
			                  i);
		slots[i].it = it;
		slots[i].pending = 1;
		slots[i].path = tb_dk_resolve(c, it->path);
		if (!slots[i].path)
			return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen,
			                  "no memory");
		slots[i].proc = tb_dk_is_proc(slots[i].path);
	}
	return TASKBOX_OK;
}

/* Reads the procfs items through exec, one after the other. */
static int read_procs(struct tb_dk_conn *c, struct slot *slots, size_t count,
                      char *errbuf, size_t errlen)
{
	char why[TASKBOX_ERRBUF_SIZE];
	int code;

	for (size_t i = 0; i < count; i++) {
		struct taskbox_read_item *it = slots[i].it;
		if (!slots[i].proc)
			continue;
		code = tb_dk_read_proc(c, slots[i].path, it->offset, it->length,
		                       &it->data, &it->file_size, why,
		                       sizeof(why));
		if (code == TASKBOX_OK || code == TASKBOX_E_NOT_FOUND)
			it->status = code;
		else
			return item_failed(it, code, why, errbuf, errlen);
	}
	return TASKBOX_OK;
}

/* read_files once, on c as it is. */
static int read_all(struct tb_dk_conn *c,
                    struct taskbox_read_item *const *items, size_t count,
                    char *errbuf, size_t errlen)
{
	struct slot *slots = calloc(count ? count : 1, sizeof(*slots));
	int code, missing = 0, more = 1;

	if (!slots)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	code = make_slots(c, items, count, slots, errbuf, errlen);
	if (code == TASKBOX_OK)
		code = round_of_dirs(c, slots, count, errbuf, errlen);
	while (code == TASKBOX_OK && more) {
		more = 0;
		for (size_t i = 0; i < count; i++)
			more |= slots[i].pending && !slots[i].proc;
		if (more)
			code = round_of_gets(c, slots, count, errbuf, errlen);
	}
	if (code == TASKBOX_OK)
		code = read_procs(c, slots, count, errbuf, errlen);
	for (size_t i = 0; i < count; i++) {
		missing |= code == TASKBOX_OK &&
		           items[i]->status == TASKBOX_E_NOT_FOUND;
		free(slots[i].path);
	}
	free(slots);
	/* As with read_file: a missing file may be a missing sandbox. */
	if (missing && tb_dk_container_state(c->dk, c->id) == TB_DK_MISSING)
		code = tb_dk_fail(TASKBOX_E_GONE, errbuf, errlen,
		                  "sandbox %.12s was removed", c->id);
	return code;
}

int tb_dk_read_files(void *conn, struct taskbox_read_item *const *items,
                     size_t count, char *errbuf, size_t errlen)
{
	struct tb_dk_conn *c = conn;
	int code = read_all(c, items, count, errbuf, errlen);

	if (code != TASKBOX_OK && tb_dk_recheck(c, &code, errbuf, errlen)) {
		for (size_t i = 0; i < count; i++) {
			c->dk->host->free(items[i]->data.data);
			memset(&items[i]->data, 0, sizeof(items[i]->data));
			items[i]->status = -1;
			items[i]->file_size = UINT64_MAX;
		}
		code = read_all(c, items, count, errbuf, errlen);
	}
	return code;
}
