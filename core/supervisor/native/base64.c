/* Base64 (RFC 4648, standard alphabet, with padding, no line breaks): the
 * write verb's --data, strictly decoded, and the wait verb's pages. */
#include "config.h"

#include <string.h>

#include "sup.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The 6-bit value of C, or -1 when C is not in the alphabet. */
static int sextet(unsigned char c)
{
	const char *p;

	if (!c)
		return -1;
	p = strchr(alphabet, c);
	return p ? (int)(p - alphabet) : -1;
}

int tb_base64_decode(const char *in, size_t n, unsigned char *out,
                     size_t outcap, size_t *outlen)
{
	size_t len = 0;

	if (n % 4)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4], pad = 0;
		unsigned long bits = 0;

		for (int j = 0; j < 4; j++) {
			unsigned char c = (unsigned char)in[i + j];

			/* '=' only at the end: "xx==" or "xxx=". */
			if (c == '=' && i + 4 == n && j >= 2 &&
			    (j == 3 || in[i + 3] == '=')) {
				v[j] = 0;
				pad++;
				continue;
			}
			v[j] = sextet(c);
			if (v[j] < 0 || pad)
				return -1;
		}
		bits = (unsigned long)v[0] << 18 | (unsigned long)v[1] << 12 |
		       (unsigned long)v[2] << 6 | (unsigned long)v[3];
		/* The canonical encoding only: the unused bits are zero. */
		if ((pad == 1 && (bits & 0xff)) ||
		    (pad == 2 && (bits & 0xffff)))
			return -1;
		if (len + 3 - (size_t)pad > outcap)
			return -1;
		out[len++] = (unsigned char)(bits >> 16);
		if (pad < 2)
			out[len++] = (unsigned char)(bits >> 8);
		if (pad < 1)
			out[len++] = (unsigned char)bits;
	}
	*outlen = len;
	return 0;
}

void tb_base64_add(struct tb_str *out, const unsigned char *in, size_t n)
{
	char quad[4];

	for (size_t i = 0; i < n; i += 3) {
		unsigned long bits = (unsigned long)in[i] << 16;

		if (i + 1 < n)
			bits |= (unsigned long)in[i + 1] << 8;
		if (i + 2 < n)
			bits |= in[i + 2];
		quad[0] = alphabet[bits >> 18 & 63];
		quad[1] = alphabet[bits >> 12 & 63];
		quad[2] = i + 1 < n ? alphabet[bits >> 6 & 63] : '=';
		quad[3] = i + 2 < n ? alphabet[bits & 63] : '=';
		tb_str_add(out, quad, 4);
	}
}
