/* read_file and write_file through the provider's file operations. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/principal.h"
#include "tasks/host_mask.h"
#include "tasks/box.h"
#include "tools/sandboxes.h"
#include "tasks/session.h"
#include "tasks/task_view.h"
#include "tools/tasks.h"
#include "tools/tool.h"
#include "tools/tool_args.h"
#include "host/sandbox_ref.h"

#define FILE_MAX 1048576

static const char *const encodings[] = {"utf-8", "base64", NULL};

#define SANDBOX_PROP                                                           \
	"\"sandbox_id\":{\"type\":\"string\",\"minLength\":3,"                 \
	"\"maxLength\":160,\"pattern\":"                                       \
	"\"" TB_SANDBOX_ID_PATTERN "\"}"
#define PATH_PROP                                                              \
	"\"path\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096,"    \
	"\"description\":\"Absolute, or relative to the sandbox's home.\"}"
#define ENCODING_PROP                                                          \
	"\"encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"],"   \
	"\"default\":\"utf-8\"}"

static const char read_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"path\"],\"properties\":{" PATH_PROP "," SANDBOX_PROP ","
    "\"offset\":{\"type\":\"integer\",\"minimum\":0,"
    "\"maximum\":1125899906842624,\"default\":0},"
    "\"length\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1048576,"
    "\"default\":65536}," ENCODING_PROP "}}";

static const char read_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandbox_id\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
    "\"offset\":{\"type\":\"integer\"},"
    "\"next_offset\":{\"type\":\"integer\"},"
    "\"size\":{\"type\":[\"integer\",\"null\"]},"
    "\"eof\":{\"type\":\"boolean\"},\"encoding\":{\"type\":\"string\"},"
    "\"content\":{\"type\":\"string\"}},"
    "\"required\":[\"sandbox_id\",\"path\",\"offset\",\"next_offset\","
    "\"size\",\"eof\",\"encoding\",\"content\"]}";

static const char write_input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"path\",\"content\"],\"properties\":{" PATH_PROP ","
    "\"content\":{\"type\":\"string\",\"maxLength\":1398104},"
    "" SANDBOX_PROP "," ENCODING_PROP "}}";

static const char write_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandbox_id\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
    "\"bytes_written\":{\"type\":\"integer\"}},"
    "\"required\":[\"sandbox_id\",\"path\",\"bytes_written\"]}";

static int read_file(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"path",   "sandbox_id", "offset",
	                                    "length", "encoding",   NULL};
	const char *path, *encoding;
	char err[TB_ERR_MAX], id[TB_SANDBOX_REF_MAX];
	struct taskbox_buf data = {0};
	struct tb_box box;
	int64_t offset, length;
	uint64_t size;
	json_t *content;
	int rc;

	(void)call;
	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_arg_str(args, "path", true, 1, 4096, &path, err, sizeof(err)) <
	        0 ||
	    tb_arg_int(args, "offset", 0, 1125899906842624LL, 0, &offset, err,
	               sizeof(err)) < 0 ||
	    tb_arg_int(args, "length", 1, FILE_MAX, 65536, &length, err,
	               sizeof(err)) < 0 ||
	    tb_arg_enum(args, "encoding", encodings, "utf-8", &encoding, err,
	                sizeof(err)) < 0 ||
	    tb_sandbox_for_call(call, args, false, id, sizeof(id), err,
	                        sizeof(err)) < 0 ||
	    tb_call_open_box(call, id, "sandbox_id", &box, err, sizeof(err)) !=
	        TASKBOX_OK)
		goto refuse;
	tb_box_renew(&box, tb_session_lifetime(tb_call_session(call), box.id));
	rc = tb_box_read(&box, path, (uint64_t)offset, (size_t)length, &data,
	                 &size, err, sizeof(err));
	tb_box_close(&box);
	if (rc != TASKBOX_OK)
		goto refuse;
	if (strcmp(encoding, "base64") == 0) {
		/* The bytes as they are, but for the operator's masked values,
		 * as in every other returned byte. */
		unsigned char *masked = NULL;
		size_t n = 0;
		char *b64 = NULL;

		if (tb_mask_apply(tb_mask_operator(), data.data, data.len,
		                  &masked, &n) == 0)
			b64 = tb_base64_encode(masked, n, NULL);
		content = b64 ? json_string(b64) : NULL;
		free(b64);
		free(masked);
	} else {
		content = tb_page_text(data.data, data.len);
	}
	*result = json_pack(
	    "{s:s, s:s, s:I, s:I, s:o, s:b, s:s, s:o}", "sandbox_id", box.id,
	    "path", path, "offset", (json_int_t)offset, "next_offset",
	    (json_int_t)((uint64_t)offset + data.len), "size",
	    size == UINT64_MAX ? json_null() : json_integer((json_int_t)size),
	    "eof",
	    size == UINT64_MAX ? data.len < (size_t)length
	                       : (uint64_t)offset + data.len >= size,
	    "encoding", encoding, "content", content);
	tb_buf_free(&data);
	return tb_result_or_oom(result);
refuse:
	*result = tb_error_json(err);
	return 1;
}

static int write_file(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"path", "content", "sandbox_id",
	                                    "encoding", NULL};
	const char *path, *encoding, *content;
	char err[TB_ERR_MAX], id[TB_SANDBOX_REF_MAX];
	unsigned char *data = NULL;
	size_t len;
	struct tb_box box;
	int rc;

	(void)call;
	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_arg_str(args, "path", true, 1, 4096, &path, err, sizeof(err)) <
	        0 ||
	    tb_arg_str(args, "content", true, 0, 1398104, &content, err,
	               sizeof(err)) < 0 ||
	    tb_arg_enum(args, "encoding", encodings, "utf-8", &encoding, err,
	                sizeof(err)) < 0)
		goto refuse;
	len = strlen(content);
	if (strcmp(encoding, "base64") == 0) {
		if (tb_base64_decode(content, len, &data, &len) < 0) {
			snprintf(
			    err, sizeof(err),
			    "content: not valid base64 (standard alphabet, "
			    "padded, no whitespace)");
			goto refuse;
		}
	} else if ((data = malloc(len + 1)) != NULL) {
		memcpy(data, content, len);
	}
	if (data == NULL) {
		snprintf(err, sizeof(err), "out of memory");
		goto refuse;
	}
	if (len > FILE_MAX) {
		snprintf(err, sizeof(err),
		         "content: more than %d bytes once decoded", FILE_MAX);
		goto refuse;
	}
	if (tb_sandbox_for_call(call, args, true, id, sizeof(id), err,
	                        sizeof(err)) < 0 ||
	    tb_call_open_box(call, id, "sandbox_id", &box, err, sizeof(err)) !=
	        TASKBOX_OK)
		goto refuse;
	tb_box_renew(&box, tb_session_lifetime(tb_call_session(call), box.id));
	rc = tb_box_write(&box, path, data, len, 0644, err, sizeof(err));
	tb_box_close(&box);
	if (rc != TASKBOX_OK)
		goto refuse;
	free(data);
	*result = json_pack("{s:s, s:s, s:I}", "sandbox_id", box.id, "path",
	                    path, "bytes_written", (json_int_t)len);
	return 0;
refuse:
	free(data);
	*result = tb_error_json(err);
	return 1;
}

static const struct tb_tool tools[] = {
    {
        .name = "read_file",
        .title = "Read a file",
        .description =
            "Reads up to length bytes (default 65536, max 1048576) of a file "
            "in a sandbox from a byte offset. content is UTF-8 text (invalid "
            "bytes become U+FFFD) or, with encoding base64, the exact bytes. "
            "Continue from next_offset until eof. Without sandbox_id the "
            "session's default sandbox is used. Renews the lifetime of a "
            "sandbox created in this session.",
        .input_schema = read_input,
        .output_schema = read_output,
        .annotations = "{\"title\":\"Read a file\",\"readOnlyHint\":true,"
                       "\"openWorldHint\":false}",
        .scope = TB_SCOPE_READ,
        .fn = read_file,
    },
    {
        .name = "write_file",
        .title = "Write a file",
        .description =
            "Creates or replaces a file in a sandbox (parent directories "
            "are made) with content, given as UTF-8 text or, with encoding "
            "base64, as bytes; at most 1 MiB. Without sandbox_id it uses "
            "the session's default sandbox, creating one if there is none. "
            "Renews the lifetime of a sandbox created in this session.",
        .input_schema = write_input,
        .output_schema = write_output,
        .annotations = "{\"title\":\"Write a file\",\"readOnlyHint\":false,"
                       "\"destructiveHint\":true,\"idempotentHint\":true,"
                       "\"openWorldHint\":false}",
        .fn = write_file,
    },
};

int tb_file_tools_register(void)
{
	size_t i;

	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (tb_tools_register(&tools[i]) < 0)
			return -1;
	return 0;
}
