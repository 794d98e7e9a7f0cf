/* docker provider: just enough tar (ustar with pax and GNU long-name
 * entries) to stream the first entry of an archive the engine sends, and
 * to build the small archives we upload. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker.h"

#define BLOCK 512u

static uint64_t round_block(uint64_t n)
{
	return (n + BLOCK - 1) / BLOCK * BLOCK;
}

/* A numeric header field: octal text, or base-256 when the top bit is
 * set. Returns -1 when malformed. */
static int64_t number(const unsigned char *f, size_t n)
{
	uint64_t v = 0;
	size_t i = 0;

	if (f[0] & 0x80) {
		v = f[0] & 0x3f;
		for (i = 1; i < n; i++) {
			if (v >> 55)
				return -1;
			v = v << 8 | f[i];
		}
		return (int64_t)v;
	}
	while (i < n && (f[i] == ' ' || f[i] == '\0'))
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return -1;
		v = v * 8 + (uint64_t)(f[i] - '0');
	}
	for (; i < n; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return -1;
	return (int64_t)v;
}

static int checksum_ok(const unsigned char *h)
{
	int64_t want = number(h + 148, 8);
	uint64_t sum = 0;

	for (size_t i = 0; i < BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return want >= 0 && (uint64_t)want == sum;
}

void tb_tar_reader_init(struct tb_tar_reader *t)
{
	memset(t, 0, sizeof(*t));
	t->pax_size = -1;
}

void tb_tar_reader_free(struct tb_tar_reader *t)
{
	free(t->pax);
	t->pax = NULL;
}

/* Reads "size" and "linkpath" from a pax extended header. */
static void parse_pax(struct tb_tar_reader *t)
{
	size_t at = 0;

	while (at < t->pax_len) {
		char *rec = t->pax + at, *sp, *eq;
		long len = strtol(rec, &sp, 10);
		if (len <= 0 || (size_t)len > t->pax_len - at || *sp != ' ')
			return;
		eq = memchr(sp, '=', (size_t)len - (size_t)(sp - rec));
		if (eq) {
			size_t klen = (size_t)(eq - sp - 1);
			size_t vlen = (size_t)(rec + len - 1 - (eq + 1));
			if (klen == 4 && !memcmp(sp + 1, "size", 4))
				t->pax_size = strtoll(eq + 1, NULL, 10);
			if (klen == 4 && !memcmp(sp + 1, "path", 4) &&
			    vlen < sizeof(t->name))
				snprintf(t->name, sizeof(t->name), "%.*s",
				         (int)vlen, eq + 1);
			if (klen == 8 && !memcmp(sp + 1, "linkpath", 8) &&
			    vlen < sizeof(t->link))
				snprintf(t->link, sizeof(t->link), "%.*s",
				         (int)vlen, eq + 1);
		}
		at += (size_t)len;
	}
}

/* Handles one complete header block. */
static void header(struct tb_tar_reader *t)
{
	const unsigned char *h = t->hdr;
	int64_t size;
	char type = (char)h[156];
	size_t i;

	for (i = 0; i < BLOCK && !h[i]; i++)
		;
	if (i == BLOCK || !checksum_ok(h) || (size = number(h + 124, 12)) < 0) {
		/* The end of the archive, or garbage. */
		t->bad = 1;
		t->ended = i == BLOCK;
		return;
	}
	if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
		t->skip = round_block((uint64_t)size);
		if ((type == 'x' || type == 'K' || type == 'L') &&
		    size < (1 << 20)) {
			free(t->pax);
			t->pax = malloc((size_t)size + 1);
			t->pax_want = t->pax ? (size_t)size : 0;
			t->pax_len = 0;
			t->hdr[0] = (unsigned char)type; /* remember the kind */
		}
		return;
	}
	t->have_entry = 1;
	if (!t->name[0]) {
		/* ustar: a prefix (when the magic says so) and the name. */
		const char *prefix = (const char *)h + 345;
		if (!memcmp(h + 257, "ustar", 5) && prefix[0])
			snprintf(t->name, sizeof(t->name), "%.155s/%.100s",
			         prefix, (const char *)h);
		else
			snprintf(t->name, sizeof(t->name), "%.100s",
			         (const char *)h);
	}
	if (type == '0' || type == '\0' || type == '7')
		t->kind = TB_TAR_FILE;
	else if (type == '5')
		t->kind = TB_TAR_DIR;
	else if (type == '2')
		t->kind = TB_TAR_LINK;
	else
		t->kind = TB_TAR_OTHER;
	if (t->kind == TB_TAR_LINK && !t->link[0])
		snprintf(t->link, sizeof(t->link), "%.100s",
		         (const char *)h + 157);
	t->size =
	    t->kind == TB_TAR_FILE
	        ? (t->pax_size >= 0 ? (uint64_t)t->pax_size : (uint64_t)size)
	        : 0;
	t->pos = 0;
}

void tb_tar_next(struct tb_tar_reader *t)
{
	uint64_t rest = t->size > t->pos ? t->size - t->pos : 0;

	t->skip = rest + (round_block(t->size) - t->size);
	t->have_entry = 0;
	t->pax_size = -1;
	t->link[0] = '\0';
	t->name[0] = '\0';
	t->size = 0;
	t->pos = 0;
}

size_t tb_tar_feed(struct tb_tar_reader *t, const unsigned char *p, size_t n,
                   int (*data)(void *, uint64_t, const unsigned char *, size_t),
                   void *arg)
{
	size_t used = 0, k;

	while (used < n && !t->bad) {
		if (t->skip) {
			k = n - used < t->skip ? n - used : (size_t)t->skip;
			if (t->pax && t->pax_len < t->pax_want) {
				size_t c = t->pax_want - t->pax_len;
				c = c < k ? c : k;
				memcpy(t->pax + t->pax_len, p + used, c);
				t->pax_len += c;
			}
			used += k;
			t->skip -= k;
			if (!t->skip && t->pax) {
				t->pax[t->pax_len] = '\0';
				if (t->hdr[0] == 'K')
					snprintf(t->link, sizeof(t->link), "%s",
					         t->pax);
				else if (t->hdr[0] == 'L')
					snprintf(t->name, sizeof(t->name), "%s",
					         t->pax);
				else
					parse_pax(t);
				free(t->pax);
				t->pax = NULL;
			}
			continue;
		}
		if (!t->have_entry) {
			k = BLOCK - t->hdr_have;
			k = n - used < k ? n - used : k;
			memcpy(t->hdr + t->hdr_have, p + used, k);
			t->hdr_have += k;
			used += k;
			if (t->hdr_have == BLOCK) {
				t->hdr_have = 0;
				header(t);
			}
			continue;
		}
		if (t->pos >= t->size)
			break;
		k = n - used;
		if ((uint64_t)k > t->size - t->pos)
			k = (size_t)(t->size - t->pos);
		if (data && data(arg, t->pos, p + used, k)) {
			t->pos += k;
			return used + k;
		}
		t->pos += k;
		used += k;
	}
	return used;
}

static int grow(struct tb_tar_writer *w, size_t add)
{
	size_t cap = w->cap ? w->cap : 4096;
	unsigned char *nb;

	while (cap - w->len < add) {
		if (cap > SIZE_MAX / 2)
			return TASKBOX_E_NOMEM;
		cap *= 2;
	}
	if (cap != w->cap) {
		nb = realloc(w->buf, cap);
		if (!nb)
			return TASKBOX_E_NOMEM;
		w->buf = nb;
		w->cap = cap;
	}
	return TASKBOX_OK;
}

static int put_header(struct tb_tar_writer *w, const char *name, char type,
                      uint32_t mode, long uid, long gid, uint64_t size)
{
	unsigned char *h;
	unsigned sum = 0;

	if (grow(w, BLOCK))
		return TASKBOX_E_NOMEM;
	h = w->buf + w->len;
	memset(h, 0, BLOCK);
	memcpy(h, name, strnlen(name, 100));
	snprintf((char *)h + 100, 8, "%07o", mode & 07777);
	snprintf((char *)h + 108, 8, "%07lo", (unsigned long)uid & 07777777);
	snprintf((char *)h + 116, 8, "%07lo", (unsigned long)gid & 07777777);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	snprintf((char *)h + 136, 12, "%011llo",
	         (unsigned long long)time(NULL) & 077777777777ull);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (size_t i = 0; i < BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum & 0777777);
	h[155] = ' ';
	w->len += BLOCK;
	return TASKBOX_OK;
}

static int put_data(struct tb_tar_writer *w, const void *data, size_t len)
{
	size_t padded = (size_t)round_block(len);

	if (padded < len || grow(w, padded))
		return TASKBOX_E_NOMEM;
	if (len)
		memcpy(w->buf + w->len, data, len);
	memset(w->buf + w->len + len, 0, padded - len);
	w->len += padded;
	return TASKBOX_OK;
}

int tb_tar_add(struct tb_tar_writer *w, const char *name, int is_dir,
               uint32_t mode, long uid, long gid, const void *data, size_t len)
{
	size_t nlen = strlen(name);

	if (nlen >= 100) {
		/* A pax header carries the long path: "LEN path=NAME\n",
		 * LEN counting its own digits. */
		size_t body = nlen + 7, digits = 1, total;
		char *rec;
		int code;
		for (size_t v = body + 1; v >= 10; v /= 10)
			digits++;
		total = body + digits;
		if (snprintf(NULL, 0, "%zu", total) > (int)digits)
			total++;
		rec = malloc(total + 1);
		if (!rec)
			return TASKBOX_E_NOMEM;
		snprintf(rec, total + 1, "%zu path=%s\n", total, name);
		code = put_header(w, "PaxHeader", 'x', 0644, 0, 0, total);
		if (!code)
			code = put_data(w, rec, total);
		free(rec);
		if (code)
			return code;
	}
	if (put_header(w, name, is_dir ? '5' : '0', mode, uid, gid,
	               is_dir ? 0 : len))
		return TASKBOX_E_NOMEM;
	return is_dir ? TASKBOX_OK : put_data(w, data, len);
}

int tb_tar_finish(struct tb_tar_writer *w)
{
	if (grow(w, 2 * BLOCK))
		return TASKBOX_E_NOMEM;
	memset(w->buf + w->len, 0, 2 * BLOCK);
	w->len += 2 * BLOCK;
	return TASKBOX_OK;
}
