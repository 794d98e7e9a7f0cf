/* Byte pages to valid UTF-8 with U+FFFD for invalid or split sequences. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/utf8_page.h"

/* For a lead byte, how many continuation bytes follow and the range the
 * first of them must lie in (Unicode Table 3-7). Returns 0 for a byte that
 * cannot start a sequence of two or more bytes. */
static int lead_info(unsigned char b, unsigned char *lo, unsigned char *hi)
{
	*lo = 0x80;
	*hi = 0xBF;
	if (b >= 0xC2 && b <= 0xDF)
		return 1;
	if (b == 0xE0) {
		*lo = 0xA0;
		return 2;
	}
	if (b == 0xED) {
		*hi = 0x9F;
		return 2;
	}
	if (b >= 0xE1 && b <= 0xEF)
		return 2;
	if (b == 0xF0) {
		*lo = 0x90;
		return 3;
	}
	if (b == 0xF4) {
		*hi = 0x8F;
		return 3;
	}
	if (b >= 0xF1 && b <= 0xF3)
		return 3;
	return 0;
}

/* Length of the valid sequence starting at in[0] (1..4), or the negated
 * length of its maximal invalid subpart (-1..-3). */
static int sequence_len(const unsigned char *in, size_t avail)
{
	unsigned char lo, hi;
	int need, i;

	if (in[0] < 0x80)
		return 1;
	need = lead_info(in[0], &lo, &hi);
	if (need == 0)
		return -1;
	for (i = 1; i <= need; i++) {
		if ((size_t)i >= avail || in[i] < lo || in[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xBF;
	}
	return need + 1;
}

int tb_utf8_repair(const unsigned char *in, size_t len, char **out,
                   size_t *outlen)
{
	/* Worst case: every byte becomes the 3-byte U+FFFD. */
	char *buf = malloc(len * 3 + 1);
	size_t i = 0, o = 0;

	if (buf == NULL)
		return -1;
	while (i < len) {
		int n = sequence_len(in + i, len - i);

		if (n > 0) {
			memcpy(buf + o, in + i, (size_t)n);
			o += (size_t)n;
			i += (size_t)n;
		} else {
			memcpy(buf + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i += (size_t)-n;
		}
	}
	buf[o] = '\0';
	*out = buf;
	*outlen = o;
	return 0;
}

json_t *tb_utf8_page_json(const unsigned char *in, size_t len)
{
	char *text;
	size_t n;
	json_t *s;

	if (tb_utf8_repair(in, len, &text, &n) < 0)
		return NULL;
	s = json_stringn_nocheck(text, n);
	free(text);
	return s;
}
