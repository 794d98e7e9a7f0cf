/* Connect streaming envelopes: a flags byte, a big-endian uint32 length,
 * then that many bytes of message. Parsed incrementally from however the
 * transport cuts the stream; and the base64 of proto-JSON bytes fields. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "e2b_int.h"

void tb_frame_reader_init(struct tb_frame_reader *r, size_t max_payload)
{
	memset(r, 0, sizeof *r);
	r->max_payload = max_payload;
}

void tb_frame_reader_free(struct tb_frame_reader *r)
{
	free(r->payload);
	r->payload = NULL;
}

int tb_frame_pending(const struct tb_frame_reader *r)
{
	return r->head_len > 0;
}

int tb_frame_feed(struct tb_frame_reader *r, const unsigned char *p, size_t n,
                  tb_frame_fn fn, void *ctx)
{
	while (n > 0) {
		size_t take;
		int rc;

		if (r->head_len < 5) {
			take = 5 - r->head_len;
			if (take > n)
				take = n;
			memcpy(r->head + r->head_len, p, take);
			r->head_len += take;
			p += take;
			n -= take;
			if (r->head_len < 5)
				return 0;
			r->payload_len = (size_t)r->head[1] << 24 |
			                 (size_t)r->head[2] << 16 |
			                 (size_t)r->head[3] << 8 | r->head[4];
			if (r->payload_len > r->max_payload)
				return TASKBOX_E_PROTOCOL;
			free(r->payload);
			r->payload =
			    malloc(r->payload_len ? r->payload_len : 1);
			if (!r->payload)
				return TASKBOX_E_NOMEM;
			r->have = 0;
		}
		take = r->payload_len - r->have;
		if (take > n)
			take = n;
		memcpy(r->payload + r->have, p, take);
		r->have += take;
		p += take;
		n -= take;
		if (r->have < r->payload_len)
			return 0;
		r->head_len = 0;
		rc = fn(ctx, r->head[0], r->payload, r->payload_len);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int tb_frame_encode(unsigned flags, const void *data, size_t len,
                    unsigned char **out, size_t *outlen)
{
	unsigned char *buf;

	if (len > 0xffffffffu)
		return -1;
	buf = malloc(len + 5);
	if (!buf)
		return -1;
	buf[0] = (unsigned char)flags;
	buf[1] = (unsigned char)(len >> 24);
	buf[2] = (unsigned char)(len >> 16);
	buf[3] = (unsigned char)(len >> 8);
	buf[4] = (unsigned char)len;
	memcpy(buf + 5, data, len);
	*out = buf;
	*outlen = len + 5;
	return 0;
}

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

int tb_base64_decode(const char *s, size_t n,
                     void (*put)(void *ctx, const unsigned char *p, size_t n),
                     void *ctx)
{
	unsigned char chunk[768];
	size_t used = 0, i;
	unsigned acc = 0;
	int bits = 0;

	while (n > 0 && s[n - 1] == '=')
		n--;
	for (i = 0; i < n; i++) {
		int v = b64_value((unsigned char)s[i]);
		if (v < 0)
			return -1;
		acc = (acc << 6 | (unsigned)v) & 0xffffffu;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			chunk[used++] = (unsigned char)(acc >> bits);
			if (used == sizeof chunk) {
				put(ctx, chunk, used);
				used = 0;
			}
		}
	}
	if (used)
		put(ctx, chunk, used);
	return 0;
}
