/* docker provider: several files of one directory with one archive GET of
 * the directory. An engine's archive GET has a fixed cost well above the
 * cost of its bytes (podman runs helper processes for each), and requests
 * side by side share the engine's CPU, so a batch whose files share a
 * directory reads them in one GET while the directory's archive stays
 * small: the stream is cut, and the files not seen yet are left to GETs
 * of their own, once it passes DIR_BUDGET bytes. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker.h"

#define DIR_BUDGET (1u << 20)
/* Bytes read after every file was seen (the archive's end blocks). */
#define DRAIN_MAX (64u << 10)

/* The child name of entry name under base ("base/child"), or NULL. */
static const char *child_of(const char *base, const char *name)
{
	size_t n = strlen(base);

	while (!strncmp(name, "./", 2))
		name += 2;
	while (*name == '/')
		name++;
	if (strncmp(name, base, n) || name[n] != '/')
		return NULL;
	return name + n + 1;
}

/* Picks the item the current entry is (or none) when its header is in. */
static void open_entry(struct tb_dk_dir_fetch *d)
{
	const char *child;
	size_t clen;

	d->entry_open = 1;
	d->cur = NULL;
	if (d->entries++ == 0) {
		/* The first entry is the directory itself, or this is no
		 * directory (a file or a link to one): then each file goes
		 * its own way. */
		if (d->t.kind != TB_TAR_DIR)
			d->unusable = 1;
		return;
	}
	child = child_of(d->base, d->t.name);
	if (!child)
		return;
	clen = strlen(child);
	while (clen && child[clen - 1] == '/')
		clen--;
	for (size_t i = 0; i < d->n; i++) {
		struct tb_dk_dir_item *it = &d->items[i];
		if (!it->found && strlen(it->name) == clen &&
		    !memcmp(it->name, child, clen)) {
			d->cur = it;
			return;
		}
	}
}

static int keep_dir(void *arg, uint64_t pos, const unsigned char *p, size_t n)
{
	struct tb_dk_dir_fetch *d = arg;
	struct tb_dk_dir_item *it;
	uint64_t from = pos, to = pos + n;

	if (!d->entry_open)
		open_entry(d);
	it = d->cur;
	if (!it)
		return 0;
	if (!it->started) {
		uint64_t want =
		    d->t.size > it->offset ? d->t.size - it->offset : 0;
		if (want > it->end - it->offset)
			want = it->end - it->offset;
		it->started = 1;
		it->cap = (size_t)want;
		it->buf = want ? d->alloc(it->cap) : NULL;
		if (want && !it->buf) {
			d->nomem = 1;
			return 1;
		}
	}
	if (from < it->offset)
		from = it->offset;
	if (to > it->end)
		to = it->end;
	if (from < to && it->buf) {
		memcpy(it->buf + (from - it->offset), p + (from - pos),
		       (size_t)(to - from));
		it->len = (size_t)(to - it->offset);
	}
	return 0;
}

/* Records the entry that just ended and moves to the next. */
static void close_entry(struct tb_dk_dir_fetch *d)
{
	struct tb_dk_dir_item *it;

	if (!d->entry_open)
		open_entry(d);
	it = d->cur;
	if (it) {
		it->found = 1;
		it->kind = d->t.kind;
		it->size = d->t.size;
		snprintf(it->link, sizeof(it->link), "%s", d->t.link);
		d->seen++;
	}
	d->entry_open = 0;
	d->cur = NULL;
	tb_tar_next(&d->t);
}

static size_t on_dir_body(char *p, size_t size, size_t n, void *arg)
{
	struct tb_dk_dir_fetch *d = arg;
	size_t total = size * n, used = 0;

	if (!d->status_checked) {
		curl_easy_getinfo(d->h, CURLINFO_RESPONSE_CODE, &d->status);
		d->status_checked = 1;
	}
	if (d->status != 200)
		return total; /* judged by its status alone */
	d->streamed += total;
	if (d->draining)
		return d->streamed - d->drain_from > DRAIN_MAX ? 0 : total;
	while (used < total) {
		used += tb_tar_feed(&d->t, (unsigned char *)p + used,
		                    total - used, keep_dir, d);
		if (d->t.bad) {
			d->complete = d->t.ended && d->entries > 0;
			d->draining = 1;
			d->drain_from = d->streamed;
			return d->complete ? total : 0;
		}
		if (d->t.have_entry && !d->entry_open)
			open_entry(d);
		if (d->nomem || d->unusable)
			return 0;
		if (d->t.have_entry &&
		    (d->t.kind != TB_TAR_FILE || d->t.pos >= d->t.size))
			close_entry(d);
		if (d->seen == d->n) {
			d->draining = 1;
			d->drain_from = d->streamed;
			return total;
		}
	}
	return d->streamed > DIR_BUDGET ? 0 : total;
}

int tb_dk_dir_begin(struct tb_dk *dk, const char *id, const char *dir,
                    struct tb_dk_dir_fetch *d, char *errbuf, size_t errlen)
{
	struct tb_dk_fetch f;
	int code;

	/* The same GET as a file's, with its own reader of the body. */
	memset(&f, 0, sizeof(f));
	code = tb_dk_fetch_begin(dk, id, dir, &f, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	tb_tar_reader_init(&d->t);
	d->h = f.h;
	curl_easy_setopt(d->h, CURLOPT_WRITEFUNCTION, on_dir_body);
	curl_easy_setopt(d->h, CURLOPT_WRITEDATA, d);
	return TASKBOX_OK;
}

int tb_dk_dir_end(struct tb_dk_dir_fetch *d, CURLcode rc)
{
	int complete;

	if (!d->status_checked)
		curl_easy_getinfo(d->h, CURLINFO_RESPONSE_CODE, &d->status);
	curl_easy_cleanup(d->h);
	d->h = NULL;
	tb_tar_reader_free(&d->t);
	if (d->nomem || d->unusable)
		return 0;
	/* No such directory: none of its files exists. */
	if (rc == CURLE_OK && d->status == 404) {
		d->complete = 1;
		return 1;
	}
	complete = d->status == 200 && (d->complete || d->seen == d->n) &&
	           (rc == CURLE_OK || d->draining);
	return complete;
}
