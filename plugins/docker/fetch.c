/* docker provider: one streamed GET of the archive of a path, keeping only
 * a window of its first entry. A transfer that has what it needs reads the
 * rest of a small answer (so its connection stays open for the next
 * request) and cuts a large one short. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker.h"

/* Bytes left after the window that are read rather than cut short. */
#define DRAIN_MAX (64u << 10)

static int keep(void *arg, uint64_t pos, const unsigned char *p, size_t n)
{
	struct tb_dk_fetch *f = arg;
	uint64_t from = pos, to = pos + n;

	if (!f->started) {
		uint64_t want =
		    f->t.size > f->offset ? f->t.size - f->offset : 0;
		if (want > f->end - f->offset)
			want = f->end - f->offset;
		f->started = 1;
		f->cap = (size_t)want;
		f->buf = want ? f->alloc(f->cap) : NULL;
		if (want && !f->buf)
			return 1;
	}
	if (from < f->offset)
		from = f->offset;
	if (to > f->end)
		to = f->end;
	if (from < to && f->buf) {
		memcpy(f->buf + (from - f->offset), p + (from - pos),
		       (size_t)(to - from));
		f->len = (size_t)(to - f->offset);
	}
	return pos + n >= f->end; /* nothing past the window is needed */
}

/* Keeps a non-200 answer's body for its message. */
static size_t keep_error(struct tb_dk_fetch *f, const char *p, size_t n)
{
	char *nb;

	if (f->err.len + n > 65536)
		return n;
	nb = realloc(f->err.body, f->err.len + n + 1);
	if (!nb)
		return 0;
	memcpy(nb + f->err.len, p, n);
	f->err.body = nb;
	f->err.len += n;
	nb[f->err.len] = '\0';
	return n;
}

/* What is left of the answer once the entry's wanted bytes are in: the
 * rest of its data, its padding and the archive's two end blocks. */
static uint64_t bytes_left(const struct tb_dk_fetch *f)
{
	uint64_t rest = f->t.size > f->t.pos ? f->t.size - f->t.pos : 0;

	return rest + (512 - f->t.size % 512) % 512 + 1024;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct tb_dk_fetch *f = arg;
	size_t total = size * n, used;
	int done;

	if (!f->status_checked) {
		curl_easy_getinfo(f->h, CURLINFO_RESPONSE_CODE, &f->status);
		f->status_checked = 1;
	}
	if (f->status != 200)
		return keep_error(f, p, total);
	if (f->draining)
		return total;
	used = tb_tar_feed(&f->t, (unsigned char *)p, total, keep, f);
	if (f->t.bad || (f->started && f->cap && !f->buf)) {
		f->stopped = 1;
		return 0;
	}
	done = f->t.have_entry &&
	       (f->t.kind != TB_TAR_FILE || f->t.pos >= f->t.size) &&
	       f->t.kind != TB_TAR_DIR && f->t.kind != TB_TAR_OTHER;
	if (done || used < total) {
		/* A directory's archive may be large: never read on. */
		if (f->t.kind == TB_TAR_FILE || f->t.kind == TB_TAR_LINK) {
			if (bytes_left(f) <= DRAIN_MAX) {
				f->draining = 1;
				return total;
			}
		}
		f->stopped = 1;
		return 0;
	}
	if (f->t.have_entry && f->t.kind != TB_TAR_FILE &&
	    f->t.kind != TB_TAR_LINK) {
		f->stopped = 1;
		return 0;
	}
	return total;
}

int tb_dk_fetch_begin(struct tb_dk *dk, const char *id, const char *path,
                      struct tb_dk_fetch *f, char *errbuf, size_t errlen)
{
	char *esc, *url;
	size_t n;
	int code;

	tb_tar_reader_init(&f->t);
	code = tb_dk_negotiate(dk, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	esc = tb_dk_escape(path);
	if (!esc)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	n = strlen(esc) + 128;
	url = malloc(n);
	if (!url) {
		curl_free(esc);
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	}
	snprintf(url, n, "/containers/%s/archive?path=%s", id, esc);
	curl_free(esc);
	f->h = tb_dk_handle(dk, url, errbuf, errlen);
	free(url);
	if (!f->h)
		return TASKBOX_E_NOMEM;
	curl_easy_setopt(f->h, CURLOPT_TIMEOUT_MS,
	                 (long)TB_DK_REQUEST_TIMEOUT_MS);
	curl_easy_setopt(f->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(f->h, CURLOPT_WRITEDATA, f);
	return TASKBOX_OK;
}

/* Judges the answer of a transfer that ran. */
static int judge(const char *path, struct tb_dk_fetch *f, char *errbuf,
                 size_t errlen)
{
	if (f->status != 200) {
		f->err.status = f->status;
		return tb_dk_http_error(&f->err, path, errbuf, errlen);
	}
	if (f->started && f->cap && !f->buf)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	if (!f->t.have_entry)
		return tb_dk_fail(TASKBOX_E_UNSUPPORTED, errbuf, errlen,
		                  "the engine sent no file for %s", path);
	if (f->t.kind == TB_TAR_DIR)
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "%s is a directory", path);
	if (f->t.kind == TB_TAR_OTHER)
		return tb_dk_fail(TASKBOX_E_UNSUPPORTED, errbuf, errlen,
		                  "%s is not a regular file", path);
	if (f->t.kind == TB_TAR_FILE && f->t.pos < f->t.size &&
	    f->t.pos < f->end)
		return tb_dk_fail(TASKBOX_E_PROTOCOL, errbuf, errlen,
		                  "the archive of %s ended early", path);
	return TASKBOX_OK;
}

int tb_dk_fetch_end(struct tb_dk *dk, const char *path, struct tb_dk_fetch *f,
                    CURLcode rc, char *errbuf, size_t errlen)
{
	int code = TASKBOX_OK;

	if (rc != CURLE_OK && !f->stopped) {
		char why[TASKBOX_ERRBUF_SIZE];
		code = tb_dk_curl_error(dk, f->h, rc, why, sizeof(why));
		tb_dk_fail(code, errbuf, errlen, "reading %s: %s", path, why);
	} else {
		if (!f->status_checked)
			curl_easy_getinfo(f->h, CURLINFO_RESPONSE_CODE,
			                  &f->status);
		code = judge(path, f, errbuf, errlen);
	}
	curl_easy_cleanup(f->h);
	f->h = NULL;
	tb_tar_reader_free(&f->t);
	tb_dk_resp_free(&f->err);
	return code;
}

char *tb_dk_link_next(const char *cur, const char *link)
{
	const char *slash = strrchr(cur, '/');
	size_t n;
	char *next;

	if (link[0] == '/' || !slash)
		return strdup(link);
	n = (size_t)(slash - cur) + strlen(link) + 2;
	next = malloc(n);
	if (next)
		snprintf(next, n, "%.*s/%s", (int)(slash - cur), cur, link);
	return next;
}
