/* Argument checks of the task tools, and base64 for file contents. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "tools/task_input.h"
#include "tools/tool_args.h"

static json_t *parse(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	cr_assert_not_null(j, "%s", text);
	return j;
}

Test(tool_args, integer_ranges_name_the_field)
{
	json_t *a = parse("{\"limit\":0,\"timeout\":3601,\"off\":-1,"
	                  "\"ok\":7,\"f\":1.5,\"s\":\"3\"}");
	char err[256];
	int64_t v;

	cr_assert_eq(
	    tb_arg_int(a, "limit", 1, 65536, 16384, &v, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "limit: must be between 1 and 65536");
	cr_assert_eq(
	    tb_arg_int(a, "timeout", 1, 3600, 300, &v, err, sizeof(err)), -1);
	cr_assert(strncmp(err, "timeout: ", 9) == 0);
	cr_assert_eq(tb_arg_int(a, "off", 0, 1048576, 0, &v, err, sizeof(err)),
	             -1);
	cr_assert_eq(tb_arg_int(a, "f", 0, 9, 0, &v, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "f: must be an integer");
	cr_assert_eq(tb_arg_int(a, "s", 0, 9, 0, &v, err, sizeof(err)), -1);
	cr_assert_eq(tb_arg_int(a, "ok", 0, 9, 0, &v, err, sizeof(err)), 0);
	cr_assert_eq(v, 7);
	cr_assert_eq(tb_arg_int(a, "absent", 0, 9, 4, &v, err, sizeof(err)), 0);
	cr_assert_eq(v, 4);
	json_decref(a);
}

Test(tool_args, strings_count_characters_not_bytes)
{
	json_t *a = parse("{\"c\":\"\\u00e9\\u00e9\",\"e\":\"\",\"n\":3}");
	const char *s;
	char err[256];

	cr_assert_eq(tb_arg_str(a, "c", true, 1, 2, &s, err, sizeof(err)), 0);
	cr_assert_eq(tb_arg_str(a, "c", true, 1, 1, &s, err, sizeof(err)), -1);
	cr_assert(strncmp(err, "c: must be 1 to 1 characters", 28) == 0, "%s",
	          err);
	cr_assert_eq(tb_arg_str(a, "e", true, 1, 9, &s, err, sizeof(err)), -1);
	cr_assert_eq(tb_arg_str(a, "n", true, 1, 9, &s, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "n: must be a string");
	cr_assert_eq(tb_arg_str(a, "x", true, 1, 9, &s, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "x: is required");
	cr_assert_eq(tb_arg_str(a, "x", false, 1, 9, &s, err, sizeof(err)), 0);
	cr_assert_null(s);
	json_decref(a);
}

Test(tool_args, unknown_fields_and_enums)
{
	static const char *const known[] = {"a", "b", NULL};
	static const char *const choices[] = {"utf-8", "base64", NULL};
	json_t *a = parse("{\"a\":1,\"zz\":2}");
	json_t *b = parse("{\"enc\":\"latin1\"}");
	const char *s;
	char err[256];

	cr_assert_eq(tb_args_known(a, known, err, sizeof(err)), -1);
	cr_assert(strncmp(err, "zz: unknown field", 17) == 0, "%s", err);
	cr_assert_eq(
	    tb_arg_enum(b, "enc", choices, "utf-8", &s, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "enc: must be one of \"utf-8\", \"base64\"");
	cr_assert_eq(
	    tb_arg_enum(a, "enc", choices, "utf-8", &s, err, sizeof(err)), 0);
	cr_assert_str_eq(s, "utf-8");
	json_decref(a);
	json_decref(b);
}

/* The encoded length agrees with jansson's own ASCII-escaped encoding. */
Test(tool_args, ascii_encoded_length_matches_jansson)
{
	static const char *samples[] = {
	    "",
	    "plain",
	    "quote\" back\\ nl\n tab\t",
	    "\x01\x1f ctl",
	    "\xC3\xA9t\xC3\xA9",
	    "\xE2\x82\xAC",
	    "\xF0\x9F\x98\x80 emoji",
	    "/x",
	};
	size_t i;

	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		json_t *s = json_string(samples[i]);
		char *enc = json_dumps(s, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);

		cr_assert_eq(tb_json_ascii_len(samples[i]), strlen(enc),
		             "%s -> %s", samples[i], enc);
		free(enc);
		json_decref(s);
	}
}

Test(base64, round_trips_every_tail_length)
{
	unsigned char in[64];
	size_t len, n, m;

	for (len = 0; len < sizeof(in); len++)
		in[len] = (unsigned char)(len * 37 + 11);
	for (len = 0; len <= 10; len++) {
		char *enc = tb_base64_encode(in, len, &n);
		unsigned char *dec;

		cr_assert_not_null(enc);
		cr_assert_eq(n, (len + 2) / 3 * 4);
		cr_assert_eq(tb_base64_decode(enc, n, &dec, &m), 0, "%s", enc);
		cr_assert_eq(m, len);
		cr_assert(memcmp(dec, in, len) == 0);
		free(enc);
		free(dec);
	}
}

Test(base64, known_vectors_and_malformed_input)
{
	unsigned char *dec;
	size_t m;
	char *enc = tb_base64_encode((const unsigned char *)"foobar", 6, &m);

	cr_assert_str_eq(enc, "Zm9vYmFy");
	free(enc);
	enc = tb_base64_encode((const unsigned char *)"fo", 2, &m);
	cr_assert_str_eq(enc, "Zm8=");
	free(enc);
	cr_assert_eq(tb_base64_decode("Zm8", 3, &dec, &m), -1);
	cr_assert_eq(tb_base64_decode("Zm8*", 4, &dec, &m), -1);
	cr_assert_eq(tb_base64_decode("Z=8=", 4, &dec, &m), -1);
	cr_assert_eq(tb_base64_decode("Zm 8", 4, &dec, &m), -1);
}

Test(tool_args, error_messages_survive_invalid_bytes)
{
	json_t *e = tb_error_json("sandbox x: stderr said \xff\xfe");

	cr_assert_not_null(e);
	cr_assert_str_eq(json_string_value(json_object_get(e, "error")),
	                 "sandbox x: stderr said \xEF\xBF\xBD\xEF\xBF\xBD");
	json_decref(e);
}

Test(tool_args, booleans_name_the_field)
{
	json_t *args = json_pack("{s:b, s:s}", "eof", 1, "tty", "yes");
	char err[256];
	bool v;

	cr_assert_eq(tb_arg_bool(args, "eof", false, &v, err, sizeof(err)), 0);
	cr_assert(v);
	cr_assert_eq(tb_arg_bool(args, "absent", true, &v, err, sizeof(err)),
	             0);
	cr_assert(v);
	cr_assert_eq(tb_arg_bool(args, "tty", false, &v, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "tty: must be true or false");
	json_decref(args);
}

/* start_task's stdin, tty, rows, cols and idempotency_key. */
static int input_args(const char *text, struct tb_sup_start_req *req, char *err,
                      size_t errlen)
{
	json_t *args = parse(text);
	int rc;

	memset(req, 0, sizeof(*req));
	rc = tb_start_input_args(args, req, err, errlen);
	json_decref(args);
	return rc;
}

Test(tool_args, start_input_options)
{
	struct tb_sup_start_req req;
	char err[256];

	cr_assert_eq(input_args("{}", &req, err, sizeof(err)), 0);
	cr_assert_str_eq(req.stdin_mode, "null");
	cr_assert_eq(req.rows, 0);
	cr_assert_null(req.key);
	cr_assert_eq(input_args("{\"stdin\":\"pipe\",\"idempotency_key\":"
	                        "\"k.1\"}",
	                        &req, err, sizeof(err)),
	             0, "%s", err);
	cr_assert_str_eq(req.stdin_mode, "pipe");
	/* req.key pointed into the freed args: only its presence counts. */
	cr_assert_eq(input_args("{\"tty\":true}", &req, err, sizeof(err)), 0);
	cr_assert_str_eq(req.stdin_mode, "tty");
	cr_assert_eq(req.rows, 24);
	cr_assert_eq(req.cols, 80);
	cr_assert_eq(input_args("{\"tty\":true,\"stdin\":\"pipe\","
	                        "\"rows\":30,\"cols\":100}",
	                        &req, err, sizeof(err)),
	             0, "%s", err);
	cr_assert_eq(req.rows, 30);
	cr_assert_eq(req.cols, 100);
}

Test(tool_args, start_input_options_name_the_field)
{
	static const struct {
		const char *args, *err;
	} bad[] = {
	    {"{\"rows\":30}", "rows: only with tty: true"},
	    {"{\"cols\":30}", "cols: only with tty: true"},
	    {"{\"tty\":true,\"stdin\":\"null\"}", "stdin: \"null\""},
	    {"{\"stdin\":\"tty\"}", "stdin: must be one of"},
	    {"{\"tty\":true,\"rows\":0}", "rows:"},
	    {"{\"tty\":true,\"cols\":1001}", "cols:"},
	    {"{\"idempotency_key\":\"a/b\"}", "idempotency_key: must be"},
	    {"{\"idempotency_key\":\"\"}", "idempotency_key:"},
	};
	struct tb_sup_start_req req;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(input_args(bad[i].args, &req, err, sizeof(err)),
		             -1, "%s was accepted", bad[i].args);
		cr_assert(strncmp(err, bad[i].err, strlen(bad[i].err)) == 0,
		          "%s: %s", bad[i].args, err);
	}
}
