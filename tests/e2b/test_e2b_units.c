/* Unit tests of the e2b plugin's parsers and error helpers: Connect
 * envelopes however the transport cuts them, base64 of proto-JSON bytes,
 * secret scrubbing, status mapping and envd versions. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../../plugins/e2b/e2b_int.h"

struct frames {
	unsigned flags[8];
	char data[8][64];
	int n;
};

static int keep_frame(void *ctx, unsigned flags, const unsigned char *data,
                      size_t len)
{
	struct frames *f = ctx;

	cr_assert_lt(f->n, 8);
	cr_assert_lt(len, 64);
	f->flags[f->n] = flags;
	memcpy(f->data[f->n], data, len);
	f->data[f->n][len] = '\0';
	f->n++;
	return 0;
}

static size_t two_frames(unsigned char *buf)
{
	unsigned char *a, *b;
	size_t alen, blen;

	cr_assert_eq(tb_frame_encode(0, "{\"event\":{}}", 12, &a, &alen), 0);
	cr_assert_eq(tb_frame_encode(TB_FRAME_END_STREAM, "{}", 2, &b, &blen),
	             0);
	memcpy(buf, a, alen);
	memcpy(buf + alen, b, blen);
	free(a);
	free(b);
	return alen + blen;
}

Test(e2b_frames, header_is_flags_and_big_endian_length)
{
	unsigned char *out;
	size_t n;

	cr_assert_eq(tb_frame_encode(2, "abc", 3, &out, &n), 0);
	cr_assert_eq(n, 8);
	cr_assert_eq(out[0], 2);
	cr_assert_eq(out[1] | out[2] | out[3], 0);
	cr_assert_eq(out[4], 3);
	cr_assert_eq(memcmp(out + 5, "abc", 3), 0);
	free(out);
}

Test(e2b_frames, every_cut_of_the_stream_gives_the_same_frames)
{
	unsigned char buf[64];
	size_t len = two_frames(buf), cut;

	for (cut = 0; cut <= len; cut++) {
		struct tb_frame_reader r;
		struct frames f = {0};

		tb_frame_reader_init(&r, 1024);
		cr_assert_eq(tb_frame_feed(&r, buf, cut, keep_frame, &f), 0);
		cr_assert_eq(
		    tb_frame_feed(&r, buf + cut, len - cut, keep_frame, &f), 0);
		cr_assert_eq(f.n, 2, "cut at %zu", cut);
		cr_assert_str_eq(f.data[0], "{\"event\":{}}");
		cr_assert_eq(f.flags[1], TB_FRAME_END_STREAM);
		cr_assert_str_eq(f.data[1], "{}");
		cr_assert_not(tb_frame_pending(&r));
		tb_frame_reader_free(&r);
	}
}

Test(e2b_frames, byte_by_byte_and_a_torn_tail_is_pending)
{
	unsigned char buf[64];
	size_t len = two_frames(buf), i;
	struct tb_frame_reader r;
	struct frames f = {0};

	tb_frame_reader_init(&r, 1024);
	for (i = 0; i + 1 < len; i++)
		cr_assert_eq(tb_frame_feed(&r, buf + i, 1, keep_frame, &f), 0);
	cr_assert_eq(f.n, 1);
	cr_assert(tb_frame_pending(&r));
	tb_frame_reader_free(&r);
}

Test(e2b_frames, an_oversized_frame_is_a_protocol_error)
{
	unsigned char head[5] = {0, 0x7f, 0xff, 0xff, 0xff};
	struct tb_frame_reader r;
	struct frames f = {0};

	tb_frame_reader_init(&r, 1024);
	cr_assert_eq(tb_frame_feed(&r, head, 5, keep_frame, &f),
	             TASKBOX_E_PROTOCOL);
	tb_frame_reader_free(&r);
}

static void append(void *ctx, const unsigned char *p, size_t n)
{
	char *s = ctx;

	strncat(s, (const char *)p, n);
}

Test(e2b_base64, standard_urlsafe_and_unpadded)
{
	char out[64] = "";

	cr_assert_eq(tb_base64_decode("aGVsbG8gd29ybGQ=", 16, append, out), 0);
	cr_assert_str_eq(out, "hello world");
	out[0] = '\0';
	cr_assert_eq(tb_base64_decode("aGk", 3, append, out), 0);
	cr_assert_str_eq(out, "hi");
	out[0] = '\0';
	cr_assert_eq(tb_base64_decode("Pz8-", 4, append, out), 0);
	cr_assert_str_eq(out, "\x3f\x3f\x3e");
	cr_assert_eq(tb_base64_decode("a!==", 4, append, out), -1);
}

Test(e2b_errors, secrets_are_scrubbed_and_lines_flattened)
{
	char err[64];
	int rc = tb_e2b_fail(
	    err, sizeof err, "e2b_topsecret", "tok123", TASKBOX_E_AUTH,
	    "bad %s and %s\nagain e2b_topsecret", "e2b_topsecret", "tok123");

	cr_assert_eq(rc, TASKBOX_E_AUTH);
	cr_assert_str_eq(err, "bad **** and **** again ****");
}

Test(e2b_errors, a_secret_past_the_buffer_leaves_no_prefix)
{
	char err[12];

	tb_e2b_fail(err, sizeof err, "0123456789abcdef", NULL, 1, "k=%s",
	            "0123456789abcdef");
	cr_assert_str_eq(err, "k=****");
}

Test(e2b_errors, statuses_map_to_abi_codes)
{
	cr_assert_eq(tb_e2b_http_code(401, 0), TASKBOX_E_AUTH);
	cr_assert_eq(tb_e2b_http_code(404, 0), TASKBOX_E_NOT_FOUND);
	cr_assert_eq(tb_e2b_http_code(429, 1), TASKBOX_E_RATE_LIMITED);
	cr_assert_eq(tb_e2b_http_code(502, 1), TASKBOX_E_GONE);
	cr_assert_eq(tb_e2b_http_code(502, 0), TASKBOX_E_UNAVAILABLE);
	cr_assert_eq(tb_e2b_http_code(504, 0), TASKBOX_E_TIMEOUT);
	cr_assert_eq(tb_e2b_connect_code("unauthenticated"), TASKBOX_E_AUTH);
	cr_assert_eq(tb_e2b_connect_code("resource_exhausted"),
	             TASKBOX_E_RATE_LIMITED);
	cr_assert_eq(tb_e2b_connect_code("no_such_code"), TASKBOX_E_PROTOCOL);
}

Test(e2b_errors, the_service_message_is_taken_from_json_or_text)
{
	char msg[64];
	const char *json = "{\"code\":404,\"message\":\"sandbox gone\"}";
	const char *text = "upstream broke\nsecond line";

	tb_e2b_service_message(json, strlen(json), msg, sizeof msg);
	cr_assert_str_eq(msg, "sandbox gone");
	tb_e2b_service_message(text, strlen(text), msg, sizeof msg);
	cr_assert_str_eq(msg, "upstream broke");
}

Test(e2b_misc, ids_and_versions)
{
	cr_assert(tb_e2b_valid_id("i1234abcd"));
	cr_assert_not(tb_e2b_valid_id(""));
	cr_assert_not(tb_e2b_valid_id("a/b"));
	cr_assert_lt(tb_e2b_version_cmp("0.3.9", "0.4.0"), 0);
	cr_assert_eq(tb_e2b_version_cmp("0.5.7", "0.5.7"), 0);
	cr_assert_gt(tb_e2b_version_cmp("0.10.0", "0.5.7"), 0);
}
