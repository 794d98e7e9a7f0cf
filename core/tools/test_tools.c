/* The fixture tools of test_tools.h. Names and answers of the first four
 * and of greet follow the conformance suite's scenarios; test_echo and
 * test_sleep let the protocol tests exercise validation, concurrency and
 * cancellation. */
#include "config.h"

#include "tools/test_tools.h"
#include "tools/tool.h"

static int simple_text(tb_call *call, json_t *args, json_t **result)
{
	*result = json_pack("{s:s}", "text",
	                    "This is a simple text response for testing.");
	return 0;
}

static int error_handling(tb_call *call, json_t *args, json_t **result)
{
	*result = json_pack("{s:s}", "error",
	                    "This tool intentionally returns an error for "
	                    "testing");
	return 1;
}

static int with_progress(tb_call *call, json_t *args, json_t **result)
{
	for (int step = 0; step <= 2; step++) {
		if (step > 0 && tb_call_sleep(call, 50))
			break;
		tb_call_progress(call, step * 50.0, 100.0, NULL);
	}
	/* The SDK client hands notifications to their handlers a tick late
	 * and forgets a request's progress handler when its answer arrives:
	 * a note followed at once by the answer is reported as an error. */
	tb_call_sleep(call, 50);
	*result = json_pack("{s:b}", "cancelled", tb_call_cancelled(call));
	return 0;
}

static int schema_2020_12(tb_call *call, json_t *args, json_t **result)
{
	*result = json_pack("{s:O}", "received", args);
	return 0;
}

/* The Tasks extension scenarios' sync-only tool: "Hello, NAME!". */
static int greet(tb_call *call, json_t *args, json_t **result)
{
	const char *name = json_string_value(json_object_get(args, "name"));
	json_t *text = json_sprintf("Hello, %s!", name ? name : "");

	*result = json_pack("{s:o}", "text", text);
	return 0;
}

static int echo(tb_call *call, json_t *args, json_t **result)
{
	*result = json_pack("{s:O}", "echo", args);
	return 0;
}

/* Sleeps ms in steps of 100 ms, reporting progress, until cancelled. */
static int sleep_tool(tb_call *call, json_t *args, json_t **result)
{
	json_int_t ms = json_integer_value(json_object_get(args, "ms"));
	json_int_t slept = 0;
	bool cancelled = false;

	while (slept < ms && !cancelled) {
		json_int_t step = ms - slept < 100 ? ms - slept : 100;
		cancelled = tb_call_sleep(call, (uint32_t)step);
		slept += step;
		tb_call_progress(call, (double)slept, (double)ms, "sleeping");
	}
	*result = json_pack("{s:I,s:b}", "ms", ms, "cancelled", cancelled);
	return 0;
}

static const struct tb_tool tools[] = {
    {
        .name = "test_simple_text",
        .title = "Simple text (test)",
        .description = "Returns a fixed text. Conformance fixture.",
        .input_schema = "{\"type\":\"object\",\"properties\":{},"
                        "\"additionalProperties\":false}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"text\":"
                         "{\"type\":\"string\"}},\"required\":[\"text\"]}",
        .annotations = "{\"readOnlyHint\":true}",
        .fn = simple_text,
        .flags = TB_TOOL_TEST_ONLY,
    },
    {
        .name = "test_error_handling",
        .title = "Error handling (test)",
        .description = "Always fails with a tool error. Conformance "
                       "fixture.",
        .input_schema = "{\"type\":\"object\",\"properties\":{},"
                        "\"additionalProperties\":false}",
        .fn = error_handling,
        .flags = TB_TOOL_TEST_ONLY,
    },
    {
        .name = "test_tool_with_progress",
        .title = "Progress (test)",
        .description = "Reports progress 0, 50 and 100 of 100, 50 ms "
                       "apart. Conformance fixture.",
        .input_schema = "{\"type\":\"object\",\"properties\":{},"
                        "\"additionalProperties\":false}",
        .output_schema = "{\"type\":\"object\",\"properties\":{"
                         "\"cancelled\":{\"type\":\"boolean\"}},"
                         "\"required\":[\"cancelled\"]}",
        .fn = with_progress,
        .flags = TB_TOOL_TEST_ONLY,
    },
    {
        .name = "json_schema_2020_12_tool",
        .title = "JSON Schema 2020-12 (test)",
        .description = "Tool with JSON Schema 2020-12 features. "
                       "Conformance fixture.",
        /* allOf/anyOf, if/then/else and $anchor are listed as given
         * (SEP-2106) but not applied (schema.h). */
        .input_schema =
            "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
            "\"type\":\"object\",\"$defs\":{\"address\":{\"$anchor\":"
            "\"addressDef\",\"type\":\"object\",\"properties\":{"
            "\"street\":{\"type\":\"string\"},\"city\":{\"type\":"
            "\"string\"}}}},\"properties\":{\"name\":{\"type\":"
            "\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"},"
            "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\","
            "\"email\"]},\"phone\":{\"type\":\"string\"},\"email\":"
            "{\"type\":\"string\"}},\"allOf\":[{\"anyOf\":[{"
            "\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
            "\"if\":{\"properties\":{\"contactMethod\":{\"const\":"
            "\"phone\"}},\"required\":[\"contactMethod\"]},\"then\":{"
            "\"required\":[\"phone\"]},\"else\":{\"required\":"
            "[\"email\"]},\"additionalProperties\":false}",
        .fn = schema_2020_12,
        .flags = TB_TOOL_TEST_ONLY,
    },
    {
        .name = "greet",
        .title = "Greet (test)",
        .description = "Returns \"Hello, NAME!\"; a sync-only tool (no "
                       "task support). Conformance fixture.",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":"
                        "{\"type\":\"string\"}},\"required\":[\"name\"],"
                        "\"additionalProperties\":false}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"text\":"
                         "{\"type\":\"string\"}},\"required\":[\"text\"]}",
        .annotations = "{\"readOnlyHint\":true}",
        .fn = greet,
        .flags = TB_TOOL_TEST_ONLY,
    },
    {
        .name = "test_echo",
        .title = "Echo (test)",
        .description = "Returns its arguments after schema validation.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{"
            "\"name\":{\"type\":\"string\",\"minLength\":1,"
            "\"maxLength\":8,\"pattern\":\"^[a-z_]+$\"},"
            "\"text\":{\"type\":\"string\",\"maxLength\":4},"
            "\"count\":{\"type\":\"integer\",\"minimum\":1,"
            "\"maximum\":10},"
            "\"ratio\":{\"type\":\"number\",\"minimum\":0,"
            "\"exclusiveMaximum\":1},"
            "\"mode\":{\"type\":\"string\",\"enum\":[\"fast\",\"slow\"]},"
            "\"flag\":{\"type\":\"boolean\",\"default\":false},"
            "\"tags\":{\"type\":\"array\",\"maxItems\":3,"
            "\"items\":{\"type\":\"string\"}},"
            "\"nested\":{\"type\":\"object\",\"properties\":{\"x\":"
            "{\"type\":\"integer\"}},\"additionalProperties\":false}},"
            "\"required\":[\"name\"],\"additionalProperties\":false}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"echo\":"
                         "{\"type\":\"object\"}},\"required\":[\"echo\"]}",
        .fn = echo,
        .flags = TB_TOOL_TEST_ONLY,
    },
    {
        .name = "test_sleep",
        .title = "Sleep (test)",
        .description = "Sleeps ms milliseconds, reporting progress; "
                       "stops early when cancelled.",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"ms\":"
                        "{\"type\":\"integer\",\"minimum\":0,"
                        "\"maximum\":600000}},\"required\":[\"ms\"],"
                        "\"additionalProperties\":false}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"ms\":"
                         "{\"type\":\"integer\"},\"cancelled\":{\"type\":"
                         "\"boolean\"}},\"required\":[\"ms\","
                         "\"cancelled\"]}",
        .annotations = "{\"readOnlyHint\":true}",
        .fn = sleep_tool,
        .flags = TB_TOOL_TEST_ONLY,
    },
};

int tb_test_tools_register(void)
{
	for (size_t i = 0; i < sizeof tools / sizeof *tools; i++)
		if (tb_tools_register(&tools[i]) < 0)
			return -1;
	return 0;
}
