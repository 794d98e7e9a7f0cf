/* Unit tests of the e2b plugin's parsers and error helpers: Connect
 * envelopes however the transport cuts them, base64 of proto-JSON bytes,
 * secret scrubbing, status mapping and envd versions, and the cache of
 * what connect learnt. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
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

static const struct taskbox_host test_host = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    sizeof(struct taskbox_host),
    malloc,
    realloc,
    free,
    NULL,
};

/* Feeds "flags:json" messages, each in its own envelope. */
static int feed(struct tb_pstream *ps, const char *const *msgs)
{
	int rc = 0;

	for (; *msgs && rc == 0; msgs++) {
		unsigned char *f;
		size_t n;
		cr_assert_eq(tb_frame_encode((unsigned)((*msgs)[0] - '0'),
		                             *msgs + 2, strlen(*msgs + 2), &f,
		                             &n),
		             0);
		rc = tb_pstream_feed(ps, f, n);
		free(f);
	}
	return rc;
}

Test(e2b_pstream, output_and_exit_code_from_the_events)
{
	const char *const msgs[] = {
	    "0:{\"event\":{\"start\":{\"pid\":42}}}",
	    "0:{\"event\":{\"data\":{\"stdout\":\"aGVsbG8K\"}}}",
	    "0:{\"event\":{\"keepalive\":{}}}",
	    "0:{\"event\":{\"data\":{\"stderr\":\"b29wcw==\"}}}",
	    "0:{\"event\":{\"end\":{\"exitCode\":3,\"exited\":true,"
	    "\"status\":\"exit status 3\"}}}",
	    "2:{}",
	    NULL};
	struct taskbox_exec_result res = {0};
	struct tb_pstream ps;

	tb_pstream_init(&ps, &test_host, &res, 0);
	cr_assert_eq(feed(&ps, msgs), 0);
	cr_assert(tb_pstream_complete(&ps));
	cr_assert_eq(ps.pid, 42);
	cr_assert_eq(res.exit_code, 3);
	cr_assert_eq(res.out.len, 6);
	cr_assert_eq(memcmp(res.out.data, "hello\n", 6), 0);
	cr_assert_eq(res.err.len, 4);
	tb_pstream_free(&ps);
	free(res.out.data);
	free(res.err.data);
}

Test(e2b_pstream, zero_values_are_absent_and_signals_are_128_plus_n)
{
	const char *const ok[] = {
	    "0:{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status "
	    "0\"}}}",
	    "2:{}", NULL};
	const char *const killed[] = {
	    "0:{\"event\":{\"end\":{\"exitCode\":-1,\"status\":\"signal: "
	    "killed\"}}}",
	    "2:{}", NULL};
	struct taskbox_exec_result res = {0};
	struct tb_pstream ps;

	tb_pstream_init(&ps, &test_host, &res, 0);
	cr_assert_eq(feed(&ps, ok), 0);
	cr_assert_eq(res.exit_code, 0);
	tb_pstream_free(&ps);
	tb_pstream_init(&ps, &test_host, &res, 0);
	cr_assert_eq(feed(&ps, killed), 0);
	cr_assert_eq(res.exit_code, 137);
	tb_pstream_free(&ps);
}

Test(e2b_pstream, limits_errors_and_junk)
{
	const char *const big[] = {
	    "0:{\"event\":{\"data\":{\"stdout\":\"MDEyMzQ1Njc4OQ==\"}}}", NULL};
	const char *const failed[] = {
	    "2:{\"error\":{\"code\":\"invalid_argument\",\"message\":\"cwd "
	    "'/x' does not exist\"}}",
	    NULL};
	const char *const after_end[] = {"2:{}", "0:{\"event\":{}}", NULL};
	const char *const compressed[] = {"1:{}", NULL};
	struct taskbox_exec_result res = {0};
	struct tb_pstream ps;

	tb_pstream_init(&ps, &test_host, &res, 4);
	cr_assert_eq(feed(&ps, big), 0);
	cr_assert_eq(res.out.len, 4);
	cr_assert(res.out_truncated);
	tb_pstream_free(&ps);
	free(res.out.data);
	memset(&res, 0, sizeof res);

	tb_pstream_init(&ps, &test_host, &res, 0);
	cr_assert_eq(feed(&ps, failed), 0);
	cr_assert(ps.stream_error);
	cr_assert_str_eq(ps.end_code, "invalid_argument");
	cr_assert_not(tb_pstream_complete(&ps));
	tb_pstream_free(&ps);

	tb_pstream_init(&ps, &test_host, &res, 0);
	cr_assert_eq(feed(&ps, after_end), TASKBOX_E_PROTOCOL);
	tb_pstream_free(&ps);
	tb_pstream_init(&ps, &test_host, &res, 0);
	cr_assert_eq(feed(&ps, compressed), TASKBOX_E_PROTOCOL);
	tb_pstream_free(&ps);
}

/* ---- what connect learnt, per sandbox (conn_cache.c) ---- */

static struct tb_e2b_conn learnt(const char *id, const char *url,
                                 const char *token)
{
	struct tb_e2b_conn c;

	memset(&c, 0, sizeof c);
	strcpy(c.id, id);
	c.envd_url = (char *)url;
	c.access_token = (char *)token;
	c.octet_upload = 1;
	return c;
}

static void conn_fields_free(struct tb_e2b_conn *c)
{
	free(c->envd_url);
	free(c->access_token);
	memset(c, 0, sizeof *c);
}

Test(e2b_conn_cache, a_kept_entry_is_copied_out_and_dropped_on_demand)
{
	struct tb_conn_cache *cache = tb_conn_cache_new(10);
	struct tb_e2b_conn in = learnt("isbx1", "http://envd", "tok");
	struct tb_e2b_conn out;

	memset(&out, 0, sizeof out);
	cr_assert_eq(tb_conn_cache_get(cache, "isbx1", &out), 0);
	tb_conn_cache_put(cache, &in);
	cr_assert_eq(tb_conn_cache_get(cache, "isbx1", &out), 1);
	cr_assert_str_eq(out.id, "isbx1");
	cr_assert_str_eq(out.envd_url, "http://envd");
	cr_assert_str_eq(out.access_token, "tok");
	cr_assert_eq(out.octet_upload, 1);
	cr_assert_neq(out.envd_url, in.envd_url, "a copy, not the entry");
	conn_fields_free(&out);
	cr_assert_eq(tb_conn_cache_get(cache, "isbx2", &out), 0);
	tb_conn_cache_drop(cache, "isbx1");
	cr_assert_eq(tb_conn_cache_get(cache, "isbx1", &out), 0);
	cr_assert_null(out.envd_url);
	tb_conn_cache_free(cache);
}

Test(e2b_conn_cache, a_newer_put_replaces_and_a_zero_ttl_keeps_nothing)
{
	struct tb_conn_cache *cache = tb_conn_cache_new(10);
	struct tb_conn_cache *off = tb_conn_cache_new(0);
	struct tb_e2b_conn a = learnt("isbx", "http://one", "t1");
	struct tb_e2b_conn b = learnt("isbx", "http://two", NULL);
	struct tb_e2b_conn out;

	memset(&out, 0, sizeof out);
	tb_conn_cache_put(cache, &a);
	tb_conn_cache_put(cache, &b);
	cr_assert_eq(tb_conn_cache_get(cache, "isbx", &out), 1);
	cr_assert_str_eq(out.envd_url, "http://two");
	cr_assert_null(out.access_token);
	conn_fields_free(&out);
	tb_conn_cache_put(off, &a);
	cr_assert_eq(tb_conn_cache_get(off, "isbx", &out), 0);
	tb_conn_cache_free(cache);
	tb_conn_cache_free(off);
}

Test(e2b_conn_cache, a_full_table_forgets_the_oldest)
{
	struct tb_conn_cache *cache = tb_conn_cache_new(60);
	struct tb_e2b_conn out;
	char id[32];
	int i, kept = 0;

	memset(&out, 0, sizeof out);
	for (i = 0; i < 300; i++) {
		struct tb_e2b_conn c;
		snprintf(id, sizeof id, "isbx%d", i);
		c = learnt(id, "http://envd", "t");
		tb_conn_cache_put(cache, &c);
	}
	for (i = 0; i < 300; i++) {
		snprintf(id, sizeof id, "isbx%d", i);
		if (tb_conn_cache_get(cache, id, &out) == 1)
			kept++;
		conn_fields_free(&out);
	}
	cr_assert_gt(kept, 0);
	cr_assert_lt(kept, 300);
	cr_assert_eq(tb_conn_cache_get(cache, "isbx299", &out), 1,
	             "the newest is kept");
	conn_fields_free(&out);
	tb_conn_cache_free(cache);
}

struct churn {
	struct tb_conn_cache *cache;
	int seed;
	int bad; /* an entry came back with another sandbox's fields */
};

/* Puts, gets and drops a handful of ids; every hit must carry the URL
 * that was put for its id. */
static void *churn_cache(void *arg)
{
	struct churn *c = arg;
	char id[32], url[64];
	int i;

	for (i = 0; i < 20000; i++) {
		int k = (i * 7 + c->seed) % 9;
		struct tb_e2b_conn in, out;

		snprintf(id, sizeof id, "isbx%d", k);
		snprintf(url, sizeof url, "http://envd-%d", k);
		memset(&out, 0, sizeof out);
		if (i % 3 == 0) {
			in = learnt(id, url, "t");
			tb_conn_cache_put(c->cache, &in);
		} else if (i % 3 == 1) {
			if (tb_conn_cache_get(c->cache, id, &out) == 1 &&
			    (strcmp(out.envd_url, url) != 0 ||
			     strcmp(out.id, id) != 0))
				c->bad++;
			conn_fields_free(&out);
		} else if (i % 11 == 0) {
			tb_conn_cache_drop(c->cache, id);
		}
	}
	return NULL;
}

Test(e2b_conn_cache, threads_may_share_it)
{
	struct tb_conn_cache *cache = tb_conn_cache_new(60);
	struct churn c[4];
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++) {
		c[i].cache = cache;
		c[i].seed = i;
		c[i].bad = 0;
		cr_assert_eq(pthread_create(&t[i], NULL, churn_cache, &c[i]),
		             0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(c[i].bad, 0);
	}
	tb_conn_cache_free(cache);
}
