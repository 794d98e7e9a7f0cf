/* libFuzzer target over the message reader and the dispatcher: the input
 * is a byte stream as stdin would carry it. Every line written back must
 * be one JSON object with "jsonrpc":"2.0". Tool calls run inline and see
 * themselves cancelled, so a fixture that sleeps returns at once. */
#include "config.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/jsonrpc.h"
#include "base/log.h"
#include "protocol/mcp.h"
#include "tools/test_tools.h"

/* Small enough that the over-long path is reached too. */
#define FUZZ_LINE_MAX 4096

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_output(void *ctx, const char *line, size_t len, bool reply)
{
	json_t *msg = json_loadb(line, len, 0, NULL);
	if (!json_is_object(msg) || memchr(line, '\n', len) ||
	    !json_is_string(json_object_get(msg, "jsonrpc")))
		abort(); /* the server wrote something that is not a message */
	if (reply != (json_object_get(msg, "method") == NULL))
		abort(); /* a response not called one, or the reverse */
	json_decref(msg);
	(*(size_t *)ctx)++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	tb_log_set_level(TB_LOG_ERROR);
	if (tb_test_tools_register() < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t written = 0;
	struct tb_mcp_opts opts = {
	    .write = check_output, .ctx = &written, .test_tools = true};
	struct tb_mcp *s = tb_mcp_new(&opts);
	struct tb_lines lines;
	const char *line;
	size_t len;
	enum tb_line_status st;

	tb_mcp_shutdown(s);
	tb_lines_init(&lines, FUZZ_LINE_MAX);
	/* Feed in two pieces so lines split across reads are exercised. */
	size_t half = size / 2;
	for (int piece = 0; piece < 2; piece++) {
		if (piece == 0)
			tb_lines_feed(&lines, (const char *)data, half);
		else
			tb_lines_feed(&lines, (const char *)data + half,
			              size - half);
		if (piece == 1)
			tb_lines_finish(&lines);
		while ((st = tb_lines_next(&lines, &line, &len)) !=
		       TB_LINE_NONE) {
			if (st == TB_LINE_OK)
				tb_mcp_handle_line(s, line, len);
			else
				tb_mcp_line_too_long(s, FUZZ_LINE_MAX);
		}
	}
	tb_lines_free(&lines);
	tb_mcp_free(s);
	return 0;
}
