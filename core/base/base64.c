/* Base64 encoding and strict decoding. */
#include "config.h"

#include <stdlib.h>

#include "base/base64.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *tb_base64_encode(const unsigned char *in, size_t len, size_t *outlen)
{
	size_t n = (len + 2) / 3 * 4, i, o = 0;
	char *out = malloc(n + 1);

	if (out == NULL)
		return NULL;
	for (i = 0; i + 2 < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 |
		             in[i + 2];

		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = alphabet[(v >> 6) & 63];
		out[o++] = alphabet[v & 63];
	}
	if (i < len) {
		unsigned v = (unsigned)in[i] << 16;

		if (i + 1 < len)
			v |= (unsigned)in[i + 1] << 8;
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	if (outlen)
		*outlen = o;
	return out;
}

static int value_of(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int tb_base64_decode(const char *text, size_t len, unsigned char **out,
                     size_t *outlen)
{
	unsigned char *buf;
	size_t i, o = 0, pad = 0;

	if (len % 4 != 0)
		return -1;
	if (len >= 1 && text[len - 1] == '=')
		pad++;
	if (len >= 2 && text[len - 2] == '=')
		pad++;
	buf = malloc(len / 4 * 3 + 1);
	if (buf == NULL)
		return -1;
	for (i = 0; i < len; i += 4) {
		int v[4], k;
		size_t keep = (i + 4 == len) ? 3 - pad : 3;

		for (k = 0; k < 4; k++) {
			if (i + (size_t)k >= len - pad)
				v[k] = 0;
			else if ((v[k] = value_of(text[i + k])) < 0)
				goto fail;
		}
		buf[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (keep > 1)
			buf[o++] =
			    (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
		if (keep > 2)
			buf[o++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
	}
	*out = buf;
	*outlen = o;
	return 0;
fail:
	free(buf);
	return -1;
}
