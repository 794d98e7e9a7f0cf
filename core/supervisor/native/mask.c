/* Masking: secrets from the environment, replaced by "****" in a byte
 * stream, also across reads (docs/supervisor.md, Masking). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sup.h"

extern char **environ;

static const char mask[] = "****";

/* NAME (LEN bytes) contains KEY, TOKEN, SECRET or PASSWORD in any case. */
static int secret_name(const char *name, size_t len)
{
	static const char *const words[] = {"KEY", "TOKEN", "SECRET",
	                                    "PASSWORD"};
	char upper[256];

	if (len >= sizeof(upper))
		len = sizeof(upper) - 1;
	for (size_t i = 0; i < len; i++)
		upper[i] = (name[i] >= 'a' && name[i] <= 'z')
		               ? (char)(name[i] - 'a' + 'A')
		               : name[i];
	upper[len] = '\0';
	for (size_t i = 0; i < 4; i++)
		if (strstr(upper, words[i]))
			return 1;
	return 0;
}

static int longer_first(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);

	return la < lb ? 1 : la > lb ? -1 : 0;
}

void tb_secrets_load(struct tb_secrets *s)
{
	size_t cap = 0;

	memset(s, 0, sizeof(*s));
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		const char *value;
		int dup = 0;

		if (!eq || eq == *e || !secret_name(*e, (size_t)(eq - *e)))
			continue;
		value = eq + 1;
		if (strlen(value) < TB_MIN_SECRET)
			continue;
		for (size_t i = 0; i < s->n; i++)
			dup |= strcmp(s->v[i], value) == 0;
		if (dup)
			continue;
		if (s->n == cap) {
			char **v;

			cap = cap ? cap * 2 : 8;
			v = realloc(s->v, cap * sizeof(*v));
			if (!v)
				tb_oom();
			s->v = v;
		}
		s->v[s->n] = strdup(value);
		if (!s->v[s->n])
			tb_oom();
		s->n++;
	}
	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), longer_first);
	s->len = malloc(s->n * sizeof(*s->len));
	if (!s->len)
		tb_oom();
	for (size_t i = 0; i < s->n; i++) {
		s->len[i] = strlen(s->v[i]);
		if (s->len[i] > s->max_len)
			s->max_len = s->len[i];
	}
}

void tb_secrets_free(struct tb_secrets *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	free(s->len);
	memset(s, 0, sizeof(*s));
}

void tb_masker_init(struct tb_masker *m, const struct tb_secrets *s)
{
	memset(m, 0, sizeof(*m));
	m->s = s;
	m->next = calloc(s->n ? s->n : 1, sizeof(*m->next));
	m->tail = malloc(s->max_len ? s->max_len : 1);
	if (!m->next || !m->tail)
		tb_oom();
}

void tb_masker_free(struct tb_masker *m)
{
	free(m->work);
	free(m->next);
	free(m->tail);
	memset(m, 0, sizeof(*m));
}

/* The earliest i >= START where D[i..N) is a proper prefix of a secret:
 * what must be held back for the next read; N when nothing. */
static size_t straddle(const struct tb_secrets *s, const unsigned char *d,
                       size_t n, size_t start)
{
	size_t best = n;

	for (size_t j = 0; j < s->n; j++) {
		size_t k = s->len[j] - 1;

		if (k > n - start)
			k = n - start;
		for (; k > 0 && n - k < best; k--) {
			if (memcmp(d + n - k, s->v[j], k) == 0) {
				best = n - k;
				break;
			}
		}
	}
	return best;
}

size_t tb_mask_feed(struct tb_masker *m, const void *data, size_t n, int final,
                    const unsigned char **out)
{
	const struct tb_secrets *s = m->s;
	size_t total = m->held + n, pos = 0, w = 0, hold;
	unsigned char *d;

	if (total + 1 > m->cap) {
		unsigned char *p = realloc(m->work, total + 1);

		if (!p)
			tb_oom();
		m->work = p;
		m->cap = total + 1;
	}
	d = m->work;
	memcpy(d, m->tail, m->held);
	if (n)
		memcpy(d + m->held, data, n);
	m->held = 0;
	hold = final ? total : straddle(s, d, total, 0);
	for (size_t j = 0; j < s->n; j++)
		m->next[j] = -2;
	for (;;) {
		long best = -1;
		size_t blen = 0;

		for (size_t j = 0; j < s->n; j++) {
			long i = m->next[j];

			if (i != -1 && i < (long)pos) {
				unsigned char *hit = memmem(
				    d + pos, total - pos, s->v[j], s->len[j]);

				i = hit ? (long)(hit - d) : -1;
				m->next[j] = i;
			}
			if (i >= 0 && (best < 0 || i < best)) {
				best = i;
				blen = s->len[j];
			}
		}
		if (best < 0 || (size_t)best >= hold)
			break;
		/* Output never overtakes input: the mask is no longer than
		 * any secret, so the work buffer is rewritten in place. */
		memmove(d + w, d + pos, (size_t)best - pos);
		w += (size_t)best - pos;
		memcpy(d + w, mask, 4);
		w += 4;
		pos = (size_t)best + blen;
		if (pos > hold)
			hold = straddle(s, d, total, pos);
	}
	memmove(d + w, d + pos, hold - pos);
	w += hold - pos;
	/* The tail d[hold..total) is intact (w <= hold): keep it aside. */
	m->held = total - hold;
	memcpy(m->tail, d + hold, m->held);
	*out = d;
	return w;
}
