/* Exact-value masking of returned pages. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tasks/host_mask.h"

#define MASK_MIN_LEN 4

struct tb_mask {
	char **values; /* sorted longest first */
	size_t *lens;
	size_t n;
};

static int by_length_desc(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);

	return la < lb ? 1 : la > lb ? -1 : 0;
}

struct tb_mask *tb_mask_new(const char *const *values, size_t n)
{
	struct tb_mask *m = calloc(1, sizeof(*m));
	size_t i;

	if (m == NULL)
		return NULL;
	m->values = calloc(n ? n : 1, sizeof(*m->values));
	m->lens = calloc(n ? n : 1, sizeof(*m->lens));
	if (m->values == NULL || m->lens == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		if (values[i] == NULL || strlen(values[i]) < MASK_MIN_LEN)
			continue;
		m->values[m->n] = strdup(values[i]);
		if (m->values[m->n] == NULL)
			goto fail;
		m->n++;
	}
	qsort(m->values, m->n, sizeof(*m->values), by_length_desc);
	for (i = 0; i < m->n; i++)
		m->lens[i] = strlen(m->values[i]);
	return m;
fail:
	tb_mask_free(m);
	return NULL;
}

void tb_mask_free(struct tb_mask *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++)
		free(m->values[i]);
	free(m->values);
	free(m->lens);
	free(m);
}

/* Index of the longest value that matches at data[0..avail), or -1. */
static long match_at(const struct tb_mask *m, const unsigned char *data,
                     size_t avail)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->lens[i] <= avail &&
		    memcmp(data, m->values[i], m->lens[i]) == 0)
			return (long)i;
	return -1;
}

int tb_mask_apply(const struct tb_mask *m, const unsigned char *data,
                  size_t len, unsigned char **out, size_t *outlen)
{
	/* Every value is at least as long as the mask text, so the output is
	 * never longer than the input. */
	unsigned char *buf = malloc(len + 1);
	size_t i = 0, o = 0;

	if (buf == NULL)
		return -1;
	while (i < len) {
		long k = (m && m->n) ? match_at(m, data + i, len - i) : -1;

		if (k >= 0) {
			memcpy(buf + o, TB_MASK_TEXT, strlen(TB_MASK_TEXT));
			o += strlen(TB_MASK_TEXT);
			i += m->lens[k];
		} else {
			buf[o++] = data[i++];
		}
	}
	buf[o] = '\0';
	*out = buf;
	*outlen = o;
	return 0;
}

static const struct tb_mask *operator_mask;

void tb_mask_set_operator(const struct tb_mask *m)
{
	operator_mask = m;
}

const struct tb_mask *tb_mask_operator(void)
{
	return operator_mask;
}
