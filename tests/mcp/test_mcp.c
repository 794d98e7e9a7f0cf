/* Lifecycle, dispatch and every protocol error path, through a session
 * without stdio (harness.h). */
#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "harness.h"
#include "protocol/mcp.h"
#include "protocol/workers.h"

static struct harness h;

static void open_inline(void)
{
	harness_open(&h, 0, 0, true);
}

static void close_h(void)
{
	harness_close(&h);
}

static int error_code(json_t *msg)
{
	json_t *e = json_object_get(msg, "error");
	cr_assert(e, "expected an error: %s", json_dumps(msg, 0));
	return (int)json_integer_value(json_object_get(e, "code"));
}

static const char *error_text(json_t *msg)
{
	return json_string_value(
	    json_object_get(json_object_get(msg, "error"), "message"));
}

TestSuite(lifecycle, .init = open_inline, .fini = close_h);

Test(lifecycle, negotiates_each_supported_version)
{
	for (int i = 0; tb_mcp_versions[i]; i++) {
		harness_close(&h);
		open_inline();
		harness_send(&h,
		             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		             "\"initialize\",\"params\":{\"protocolVersion\":"
		             "\"%s\",\"capabilities\":{},\"clientInfo\":{"
		             "\"name\":\"t\",\"version\":\"1\"}}}",
		             tb_mcp_versions[i]);
		json_t *r =
		    json_object_get(harness_answer(&h, 1, NULL), "result");
		cr_assert_str_eq(
		    json_string_value(json_object_get(r, "protocolVersion")),
		    tb_mcp_versions[i]);
		json_t *info = json_object_get(r, "serverInfo");
		cr_assert_str_eq(
		    json_string_value(json_object_get(info, "name")),
		    "taskbox");
		cr_assert_str_eq(
		    json_string_value(json_object_get(info, "version")),
		    PACKAGE_VERSION);
		json_t *tools = json_object_get(
		    json_object_get(r, "capabilities"), "tools");
		cr_assert(json_is_false(json_object_get(tools, "listChanged")));
	}
}

Test(lifecycle, answers_an_unknown_version_with_the_newest)
{
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	                 "\"initialize\",\"params\":{\"protocolVersion\":"
	                 "\"1999-01-01\",\"capabilities\":{}}}");
	json_t *r = json_object_get(harness_answer(&h, 1, NULL), "result");
	cr_assert_str_eq(
	    json_string_value(json_object_get(r, "protocolVersion")),
	    "2025-11-25");
}

Test(lifecycle, only_ping_before_initialize)
{
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
	json_t *pong = harness_answer(&h, 1, NULL);
	cr_assert(json_is_object(json_object_get(pong, "result")));
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	                 "\"tools/list\"}");
	json_t *r = harness_answer(&h, 2, NULL);
	cr_assert_eq(error_code(r), -32600);
	cr_assert(strstr(error_text(r), "not initialized"));
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	                 "\"initialize\",\"params\":{}}");
	json_t *e3 = harness_answer(&h, 3, NULL);
	cr_assert_eq(error_code(e3), -32602);
	harness_init(&h, "2025-06-18");
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	                 "\"initialize\",\"params\":{\"protocolVersion\":"
	                 "\"2025-06-18\"}}");
	json_t *e4 = harness_answer(&h, 4, NULL);
	cr_assert_eq(error_code(e4), -32600);
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
	json_t *p5 = harness_answer(&h, 5, NULL);
	cr_assert(json_object_get(p5, "result"));
}

TestSuite(errors, .init = open_inline, .fini = close_h);

Test(errors, each_error_is_answered_and_serving_goes_on)
{
	static const struct {
		const char *line;
		int code;
		bool null_id;
	} cases[] = {
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,", -32700, true},
	    {"[]", -32600, true},
	    {"[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]", -32600,
	     true},
	    {"\"text\"", -32600, true},
	    {"{\"id\":9,\"method\":\"ping\"}", -32600, false},
	    {"{\"jsonrpc\":\"2.1\",\"id\":9,\"method\":\"ping\"}", -32600,
	     false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", -32600,
	     true},
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"nope/x\"}", -32601,
	     false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
	     "\"params\":{\"name\":\"no_such_tool\"}}",
	     -32602, false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
	     "\"params\":{\"name\":7}}",
	     -32602, false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
	     "\"params\":{\"name\":\"test_echo\",\"arguments\":[]}}",
	     -32602, false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
	     "\"params\":{\"name\":\"test_echo\",\"_meta\":{"
	     "\"progressToken\":{}}}}",
	     -32602, false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\"}", -32602,
	     false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\","
	     "\"params\":{\"cursor\":\"bogus\"}}",
	     -32602, false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\","
	     "\"params\":7}",
	     -32602, false},
	};
	harness_init(&h, "2025-11-25");
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		harness_send(&h, "%s", cases[i].line);
		json_t *r = harness_next(&h);
		cr_assert(r, "no answer to %s", cases[i].line);
		cr_assert_eq(error_code(r), cases[i].code, "%s: %s",
		             cases[i].line, error_text(r));
		json_t *id = json_object_get(r, "id");
		cr_assert(id, "no id member");
		if (cases[i].null_id)
			cr_assert(json_is_null(id), "%s", cases[i].line);
		else
			cr_assert_eq(json_integer_value(id), 9, "%s",
			             cases[i].line);
		harness_send(&h,
		             "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":"
		             "\"ping\"}",
		             i + 100);
		json_t *pong = harness_answer(&h, i + 100, NULL);
		cr_assert(json_object_get(pong, "result"));
	}
	tb_mcp_line_too_long(h.session, 16);
	json_t *too_long = harness_next(&h);
	cr_assert_eq(error_code(too_long), -32600);
}

Test(errors, unknown_tool_message_names_it)
{
	harness_init(&h, "2025-11-25");
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	                 "\"tools/call\",\"params\":{\"name\":\"nope\"}}");
	json_t *r = harness_answer(&h, 1, NULL);
	cr_assert_str_eq(error_text(r), "Unknown tool: nope");
}

Test(errors, notifications_and_responses_are_never_answered)
{
	harness_init(&h, "2025-11-25");
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}");
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\"}");
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"x\","
	                 "\"params\":[]}");
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"method\":"
	                 "\"notifications/cancelled\",\"params\":{"
	                 "\"requestId\":12345}}");
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
	harness_send(&h, "   ");
	cr_assert_eq(harness_pending(&h), 0);
}

TestSuite(tools, .init = open_inline, .fini = close_h);

static json_t *call(const char *tool, const char *args, json_int_t id)
{
	harness_send(&h,
	             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
	             "\"tools/call\",\"params\":{\"name\":\"%s\","
	             "\"arguments\":%s}}",
	             (long long)id, tool, args);
	json_t *r = json_object_get(harness_answer(&h, id, NULL), "result");
	cr_assert(r, "call %s failed", tool);
	return r;
}

static const char *text_of(json_t *result)
{
	json_t *block = json_array_get(json_object_get(result, "content"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(block, "type")),
	                 "text");
	return json_string_value(json_object_get(block, "text"));
}

Test(tools, results_carry_structured_content_and_the_same_text)
{
	harness_init(&h, "2025-11-25");
	json_t *r = call("test_echo", "{\"name\":\"a_b\",\"count\":3.0}", 1);
	cr_assert(json_is_false(json_object_get(r, "isError")));
	json_t *sc = json_object_get(r, "structuredContent");
	json_t *parsed = json_loads(text_of(r), 0, NULL);
	cr_assert(json_equal(sc, parsed), "text and structuredContent differ");
	json_decref(parsed);
	json_t *count = json_object_get(json_object_get(sc, "echo"), "count");
	cr_assert(json_is_integer(count) && json_integer_value(count) == 3);
}

Test(tools, bad_arguments_are_tool_errors_naming_field_and_rule)
{
	static const struct {
		const char *args;
		const char *words;
	} cases[] = {
	    {"{}", "field 'name': missing"},
	    {"{\"name\":\"ab\",\"bogus\":1}", "field 'bogus': unknown field"},
	    {"{\"name\":1}", "field 'name': wrong type"},
	    {"{\"name\":\"ab\",\"count\":11}", "field 'count': out of range"},
	    {"{\"name\":\"abcdefghi\"}", "field 'name': too long"},
	    {"{\"name\":\"A\"}", "field 'name': bad pattern"},
	    {"{\"name\":\"ab\",\"mode\":\"x\"}", "field 'mode': not one of"},
	    {"{\"name\":\"ab\",\"nested\":{\"y\":1}}",
	     "field 'nested.y': unknown field"},
	};
	harness_init(&h, "2025-11-25");
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		json_t *r = call("test_echo", cases[i].args, (json_int_t)i + 1);
		cr_assert(json_is_true(json_object_get(r, "isError")), "%s",
		          cases[i].args);
		cr_assert_null(json_object_get(r, "structuredContent"));
		json_t *err = json_loads(text_of(r), 0, NULL);
		const char *msg =
		    json_string_value(json_object_get(err, "error"));
		cr_assert(msg && strstr(msg, cases[i].words), "%s: %s",
		          cases[i].args, msg);
		json_decref(err);
	}
}

Test(tools, the_fixture_error_tool_fails)
{
	harness_init(&h, "2025-06-18");
	json_t *r = call("test_error_handling", "{}", 1);
	cr_assert(json_is_true(json_object_get(r, "isError")));
	cr_assert(strstr(text_of(r), "intentionally"));
}

Test(tools, missing_or_null_arguments_mean_none)
{
	harness_init(&h, "2025-11-25");
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	                 "\"tools/call\",\"params\":{\"name\":"
	                 "\"test_simple_text\"}}");
	json_t *r = json_object_get(harness_answer(&h, 1, NULL), "result");
	cr_assert(json_is_false(json_object_get(r, "isError")));
	r = call("test_simple_text", "null", 2);
	cr_assert(json_is_false(json_object_get(r, "isError")));
}

static json_t *list_tools(json_int_t id)
{
	harness_send(&h,
	             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
	             "\"tools/list\",\"params\":{}}",
	             (long long)id);
	return json_object_get(
	    json_object_get(harness_answer(&h, id, NULL), "result"), "tools");
}

static json_t *find(json_t *tools, const char *name)
{
	size_t i;
	json_t *t;
	json_array_foreach(
	    tools, i,
	    t) if (strcmp(json_string_value(json_object_get(t, "name")),
	                  name) == 0) return t;
	return NULL;
}

Test(tools, listing_follows_the_negotiated_version)
{
	harness_init(&h, "2025-11-25");
	json_t *t = find(list_tools(1), "test_sleep");
	cr_assert(t);
	cr_assert(json_object_get(t, "title"));
	cr_assert(json_object_get(t, "outputSchema"));
	cr_assert(json_object_get(t, "annotations"));
	json_t *schema = json_object_get(t, "inputSchema");
	cr_assert(
	    json_is_false(json_object_get(schema, "additionalProperties")));
	harness_close(&h);
	open_inline();
	harness_init(&h, "2024-11-05");
	t = find(list_tools(1), "test_sleep");
	cr_assert_null(json_object_get(t, "title"));
	cr_assert_null(json_object_get(t, "outputSchema"));
	cr_assert_null(json_object_get(t, "annotations"));
	json_t *r = call("test_simple_text", "{}", 2);
	cr_assert_null(json_object_get(r, "structuredContent"));
}

Test(tools, fixtures_exist_only_with_the_test_switch)
{
	harness_close(&h);
	harness_open(&h, 0, 0, false);
	harness_init(&h, "2025-11-25");
	cr_assert_eq(json_array_size(list_tools(1)), 0);
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	                 "\"tools/call\",\"params\":{\"name\":"
	                 "\"test_simple_text\"}}");
	json_t *r = harness_answer(&h, 2, NULL);
	cr_assert_eq(error_code(r), -32602);
}

TestSuite(concurrency, .fini = close_h);

static void sleep_call(json_int_t id, int ms, bool progress)
{
	harness_send(&h,
	             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
	             "\"tools/call\",\"params\":{\"name\":\"test_sleep\","
	             "\"arguments\":{\"ms\":%d}%s}}",
	             (long long)id, ms,
	             progress ? ",\"_meta\":{\"progressToken\":\"tok\"}" : "");
}

Test(concurrency, ping_is_answered_while_calls_run)
{
	harness_open(&h, 2, 4, true);
	harness_init(&h, "2025-11-25");
	sleep_call(1, 60000, false);
	sleep_call(2, 60000, false);
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
	json_t *r = harness_next(&h);
	cr_assert_eq(json_integer_value(json_object_get(r, "id")), 3,
	             "ping waited for the calls");
	/* Same id as a call in flight. */
	sleep_call(1, 10, false);
	r = harness_next(&h);
	cr_assert_eq(json_integer_value(json_object_get(r, "id")), 1);
	cr_assert_eq(error_code(r), -32600);
	cr_assert(strstr(error_text(r), "in flight"));
	harness_send(&h, "{\"jsonrpc\":\"2.0\",\"method\":"
	                 "\"notifications/cancelled\",\"params\":{"
	                 "\"requestId\":2,\"reason\":\"test\"}}");
	/* Shutdown cancels call 1, whose answer still comes. */
	tb_mcp_shutdown(h.session);
	r = harness_answer(&h, 1, NULL);
	cr_assert(json_is_true(json_object_get(
	    json_object_get(json_object_get(r, "result"), "structuredContent"),
	    "cancelled")));
	tb_workers_drain(h.pool);
	h.pool = NULL;
	cr_assert_eq(harness_pending(&h), 0, "the cancelled call answered");
}

Test(concurrency, a_full_queue_answers_server_busy)
{
	harness_open(&h, 1, 1, true);
	harness_init(&h, "2025-11-25");
	sleep_call(1, 60000, true);
	/* Its first progress note shows the worker took call 1. */
	json_t *r = harness_next(&h);
	cr_assert_str_eq(json_string_value(json_object_get(r, "method")),
	                 "notifications/progress");
	sleep_call(2, 60000, false); /* fills the queue */
	sleep_call(3, 0, false);
	r = harness_next(&h);
	cr_assert_eq(json_integer_value(json_object_get(r, "id")), 3);
	cr_assert_eq(error_code(r), -32603);
	cr_assert(strstr(error_text(r), "server busy"));
	for (int id = 1; id <= 2; id++)
		harness_send(&h,
		             "{\"jsonrpc\":\"2.0\",\"method\":"
		             "\"notifications/cancelled\",\"params\":{"
		             "\"requestId\":%d}}",
		             id);
	tb_workers_drain(h.pool);
	h.pool = NULL;
	while ((r = harness_pending(&h) ? harness_next(&h) : NULL))
		cr_assert(json_object_get(r, "method"),
		          "a cancelled call was answered");
}

Test(concurrency, progress_is_sent_for_a_progress_token)
{
	harness_open(&h, 2, 4, true);
	harness_init(&h, "2025-11-25");
	sleep_call(7, 250, true);
	int notes = 0;
	json_t *r = harness_answer(&h, 7, &notes);
	cr_assert(json_object_get(r, "result"));
	cr_assert_geq(notes, 3, "%d progress notifications", notes);
	sleep_call(8, 150, false);
	notes = 0;
	harness_answer(&h, 8, &notes);
	cr_assert_eq(notes, 0);
}

Test(concurrency, progress_notifications_have_the_spec_shape)
{
	harness_open(&h, 0, 0, true);
	harness_init(&h, "2025-11-25");
	sleep_call(1, 100, true);
	json_t *n = harness_next(&h);
	cr_assert_str_eq(json_string_value(json_object_get(n, "method")),
	                 "notifications/progress");
	json_t *p = json_object_get(n, "params");
	cr_assert_str_eq(json_string_value(json_object_get(p, "progressToken")),
	                 "tok");
	cr_assert_eq(json_number_value(json_object_get(p, "progress")), 100);
	cr_assert_eq(json_number_value(json_object_get(p, "total")), 100);
	cr_assert_str_eq(json_string_value(json_object_get(p, "message")),
	                 "sleeping");
}
