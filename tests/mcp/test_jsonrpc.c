/* Framing and envelope: the line reader and tb_rpc_parse. */
#include "config.h"

#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "protocol/jsonrpc.h"

static enum tb_line_status next(struct tb_lines *r, char *out, size_t cap)
{
	const char *line;
	size_t len;
	enum tb_line_status st = tb_lines_next(r, &line, &len);
	if (st == TB_LINE_OK) {
		cr_assert_lt(len, cap);
		memcpy(out, line, len);
		out[len] = '\0';
	}
	return st;
}

Test(lines, splits_on_newlines_across_feeds)
{
	struct tb_lines r;
	char buf[64];

	tb_lines_init(&r, 100);
	tb_lines_feed(&r, "ab\ncd", 5);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_OK);
	cr_assert_str_eq(buf, "ab");
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_NONE);
	tb_lines_feed(&r, "e\n\nf", 4);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_OK);
	cr_assert_str_eq(buf, "cde");
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_OK);
	cr_assert_str_eq(buf, "");
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_NONE);
	tb_lines_finish(&r);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_OK, "last line");
	cr_assert_str_eq(buf, "f");
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_NONE);
	tb_lines_free(&r);
}

Test(lines, drops_an_overlong_line_once_and_keeps_going)
{
	struct tb_lines r;
	char buf[64];
	char big[40];

	memset(big, 'x', sizeof big);
	tb_lines_init(&r, 10);
	tb_lines_feed(&r, "ok\n", 3);
	tb_lines_feed(&r, big, 20);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_OK);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_TOO_LONG);
	tb_lines_feed(&r, big, 40);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_NONE, "reported once");
	tb_lines_feed(&r, "xx\nafter\n", 9);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_OK);
	cr_assert_str_eq(buf, "after");
	/* An over-long line that arrives whole in one piece. */
	tb_lines_feed(&r, "0123456789A\nyes\n", 16);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_TOO_LONG);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_OK);
	cr_assert_str_eq(buf, "yes");
	/* Exactly max bytes is fine. */
	tb_lines_feed(&r, "0123456789\n", 11);
	cr_assert_eq(next(&r, buf, sizeof buf), TB_LINE_OK);
	cr_assert_str_eq(buf, "0123456789");
	tb_lines_free(&r);
}

Test(lines, reads_a_16_mib_line_from_a_pipe)
{
	struct tb_lines r;
	int p[2];
	size_t big = TB_LINE_MAX;
	char *data = malloc(big + 1);
	const char *line;
	size_t len;

	memset(data, 'a', big);
	data[big] = '\n';
	cr_assert_eq(pipe(p), 0);
	tb_lines_init(&r, TB_LINE_MAX);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		size_t off = 0;
		while (off < big + 1) {
			ssize_t n = write(p[1], data + off, big + 1 - off);
			if (n <= 0)
				_exit(1);
			off += (size_t)n;
		}
		_exit(0);
	}
	close(p[1]);
	enum tb_line_status st = TB_LINE_NONE;
	while (st == TB_LINE_NONE && tb_lines_fill(&r, p[0]) > 0)
		st = tb_lines_next(&r, &line, &len);
	cr_assert_eq(st, TB_LINE_OK);
	cr_assert_eq(len, big);
	close(p[0]);
	tb_lines_free(&r);
	free(data);
}

static void parse(const char *text, struct tb_rpc_msg *m)
{
	tb_rpc_parse(text, strlen(text), m);
}

Test(envelope, request_notification_and_response)
{
	struct tb_rpc_msg m;

	parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", &m);
	cr_assert_eq(m.kind, TB_RPC_REQUEST);
	cr_assert_str_eq(m.method, "ping");
	cr_assert_eq(json_integer_value(m.id), 7);
	tb_rpc_msg_clear(&m);
	parse("{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{}}", &m);
	cr_assert_eq(m.kind, TB_RPC_NOTIFICATION);
	tb_rpc_msg_clear(&m);
	parse("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}", &m);
	cr_assert_eq(m.kind, TB_RPC_RESPONSE);
	tb_rpc_msg_clear(&m);
}

struct bad {
	const char *text;
	int code;
	bool has_id;
	const char *words;
};

Test(envelope, every_malformed_shape_is_named)
{
	static const struct bad cases[] = {
	    {"{\"jsonrpc\":\"2.0\",", TB_RPC_PARSE_ERROR, false, "Parse error"},
	    {"nonsense", TB_RPC_PARSE_ERROR, false, "Parse error"},
	    {"\"\\u0000\"", TB_RPC_PARSE_ERROR, false, "Parse error"},
	    {"{\"a\":\"\xff\"}", TB_RPC_PARSE_ERROR, false, "Parse error"},
	    /* A key twice is refused, however deep: no "last one wins". */
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"id\":2}",
	     TB_RPC_PARSE_ERROR, false, "duplicate object key"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	     "\"params\":{\"name\":\"run_command\",\"arguments\":{"
	     "\"command\":\"true\",\"command\":\"rm -rf x\"}}}",
	     TB_RPC_PARSE_ERROR, false, "duplicate object key"},
	    {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
	     TB_RPC_INVALID_REQUEST, false, "batch"},
	    {"42", TB_RPC_INVALID_REQUEST, false, "object"},
	    {"{\"id\":1,\"method\":\"ping\"}", TB_RPC_INVALID_REQUEST, true,
	     "jsonrpc"},
	    {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
	     TB_RPC_INVALID_REQUEST, true, "jsonrpc"},
	    {"{\"jsonrpc\":2,\"id\":1,\"method\":\"ping\"}",
	     TB_RPC_INVALID_REQUEST, true, "jsonrpc"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
	     TB_RPC_INVALID_REQUEST, false, "'id'"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
	     TB_RPC_INVALID_REQUEST, false, "'id'"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
	     TB_RPC_INVALID_REQUEST, false, "'id'"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}",
	     TB_RPC_INVALID_REQUEST, false, "'id'"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":3}", TB_RPC_INVALID_REQUEST, true,
	     "'method'"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":5}",
	     TB_RPC_INVALID_REQUEST, true, "'method'"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\","
	     "\"params\":[1]}",
	     TB_RPC_INVALID_PARAMS, true, "'params'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct tb_rpc_msg m;
		parse(cases[i].text, &m);
		cr_assert_eq(m.kind, TB_RPC_INVALID, "%s", cases[i].text);
		cr_assert_eq(m.error_code, cases[i].code, "%s: %d",
		             cases[i].text, m.error_code);
		cr_assert_eq(m.id != NULL, cases[i].has_id, "%s",
		             cases[i].text);
		cr_assert(strstr(m.error_message, cases[i].words), "%s: %s",
		          cases[i].text, m.error_message);
		tb_rpc_msg_clear(&m);
	}
}

Test(envelope, a_notification_with_bad_params_is_not_answered)
{
	struct tb_rpc_msg m;
	parse("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":3}", &m);
	cr_assert_eq(m.kind, TB_RPC_NOTIFICATION);
	cr_assert_null(m.method);
	tb_rpc_msg_clear(&m);
}

Test(envelope, builders_and_id_keys)
{
	json_t *id = json_string("a\"b");
	json_t *e = tb_rpc_error(id, -32601, "Method not found: %s", "zz");
	char *text = tb_rpc_dump(e);
	cr_assert_str_eq(text, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\","
	                       "\"error\":{\"code\":-32601,\"message\":"
	                       "\"Method not found: zz\"}}");
	free(text);
	json_decref(e);
	e = tb_rpc_error(NULL, -32700, "x");
	cr_assert(json_is_null(json_object_get(e, "id")));
	json_decref(e);
	char *k1 = tb_rpc_id_key(id);
	json_t *num = json_integer(5);
	char *k2 = tb_rpc_id_key(num);
	cr_assert_str_eq(k1, "s:a\"b");
	cr_assert_str_eq(k2, "i:5");
	free(k1);
	free(k2);
	json_decref(num);
	json_decref(id);
	cr_assert(tb_rpc_blank(" \t\r", 3));
	cr_assert_not(tb_rpc_blank(" x", 2));
}

/* tb_rpc_dump_with gives byte for byte the line of the message with the
 * member added last to its result. */
static void check_dump_with(json_t *msg, const char *raw)
{
	char *got = tb_rpc_dump_with(msg, "structuredContent", raw);
	json_t *value = json_loads(raw, JSON_DECODE_ANY, NULL);
	json_t *want_msg = json_deep_copy(msg);

	cr_assert_not_null(got);
	cr_assert_not_null(value);
	json_object_set_new(json_object_get(want_msg, "result"),
	                    "structuredContent", value);
	char *want = tb_rpc_dump(want_msg);
	cr_assert_str_eq(got, want);
	free(got);
	free(want);
	json_decref(want_msg);
	json_decref(msg);
}

Test(rpc, dump_with_adds_a_serialized_member_to_the_result)
{
	json_t *id = json_integer(7);
	const char *raw = "{\"a\":[1,\"q\\\"}}\"],\"b\":{}}";

	check_dump_with(tb_rpc_result(id, json_pack("{s:[{s:s,s:s}],s:b}",
	                                            "content", "type", "text",
	                                            "text", raw, "isError", 0)),
	                raw);
	check_dump_with(tb_rpc_result(id, json_object()), "[]");
	/* A message not shaped as tb_rpc_result makes it. */
	check_dump_with(json_pack("{s:{s:i},s:s,s:O}", "result", "x", 1,
	                          "jsonrpc", "2.0", "id", id),
	                "null");
	json_decref(id);
}

/* The value count that guards the parse: structure outside strings only,
 * escapes inside strings honoured, and it stops once past the limit. */
Test(envelope, values_are_counted_outside_strings)
{
	static const struct {
		const char *text;
		size_t values;
	} cases[] = {
	    {"1", 1},
	    {"[]", 2}, /* an estimate from above: '[' may open an empty array */
	    {"[1,2,3]", 4},
	    {"{\"a\":1,\"b\":[true,null]}", 6},
	    {"\"a,b:[c\"", 1},
	    {"[\"a\\\",b\",\"c\\\\\",1]", 4},
	    {"[\"\\\\\\\"[,:\"]", 2},
	    {"\"unterminated, [", 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		cr_assert_eq(tb_rpc_count_values(cases[i].text,
		                                 strlen(cases[i].text), 100),
		             cases[i].values, "%s", cases[i].text);
	cr_assert_eq(tb_rpc_count_values("[1,1,1,1,1,1,1,1]", 17, 3), 4,
	             "stops once past the limit");
}
