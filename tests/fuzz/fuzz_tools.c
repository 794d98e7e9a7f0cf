/* libFuzzer target over tool arguments: each input line is one tools/call,
 * its first byte choosing the tool ((its value + 2) mod 12: "F"
 * create_sandbox, "G" start_task, ... "O" remove_task, "P" write_task, "Q"
 * resize_task, in the order of tools[]) and the
 * rest its `arguments` (JSON, or
 * a string when it does not parse), sent through the real protocol core
 * to the real tools and the local provider compiled in, on a scratch
 * root. What reaches the machine is made harmless: every `command`
 * becomes one of a few fixed ones, every path is made relative to the
 * sandbox's home without "..", waits and timeouts are capped, sandboxes
 * live at most 60 s, and every sandbox is destroyed after each input (its
 * processes with it). Every line written back must be one JSON object. */
#include "config.h"

#include <dirent.h>
#include <jansson.h>
#include <ltdl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "host/config_file.h"
#include "host/loader.h"
#include "host/registry.h"
#include "protocol/mcp.h"
#include "tasks/session.h"
#include "tools/tasks.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The local provider, compiled into this target, as a preloaded module. */
const struct taskbox_provider *taskbox_provider_entry_v1(void);
static const lt_dlsymlist builtin[] = {
    {"@PROGRAM@", NULL},
    {"local.a", NULL},
    {"taskbox_provider_entry_v1", (void *)taskbox_provider_entry_v1},
    {NULL, NULL}};

static const char *const tools[] = {
    "create_sandbox", "start_task",   "get_task",    "cancel_task",
    "list_tasks",     "kill_sandbox", "run_command", "read_file",
    "write_file",     "remove_task",  "write_task",  "resize_task",
    "list_sandboxes"};
#define N_TOOLS (sizeof tools / sizeof tools[0])

static const char *const commands[] = {"true", "echo out; echo err >&2",
                                       "exit 3", "sleep 0.2; echo late",
                                       "printf '\\377\\000x'"};

static char root[64];
static struct tb_config *cfg;
static const struct tb_instance *inst;

static void check_output(void *ctx, const char *line, size_t len, bool reply)
{
	json_t *msg = json_loadb(line, len, JSON_ALLOW_NUL, NULL);

	(void)ctx, (void)reply;
	if (!json_is_object(msg) || memchr(line, '\n', len)) {
		/* the server wrote something that is not a message */
		fprintf(stderr, "fuzz_tools: not one message: %.*s\n", (int)len,
		        line);
		abort();
	}
	json_decref(msg);
}

static void destroy_all(void);

/* At exit: no sandbox, no process, no scratch root, nothing held. */
static void cleanup(void)
{
	destroy_all();
	tb_tasks_fini();
	tb_registry_close();
	tb_loader_exit();
	tb_config_free(cfg);
	rmdir(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char text[512], err[4096];

	(void)argc, (void)argv;
	tb_log_set_level(TB_LOG_ERROR);
	snprintf(root, sizeof root, "%s/taskbox-fuzz-tools.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		abort();
	snprintf(text, sizeof text,
	         "{\"default\":\"fz\",\"providers\":{\"fz\":{\"plugin\":"
	         "\"local\",\"settings\":{\"root\":\"%s\","
	         "\"default_lifetime\":60,\"max_lifetime\":60}}}}",
	         root);
	tb_loader_set_builtin(builtin);
	if (!(cfg = tb_config_parse(text, "fuzz", err, sizeof err)) ||
	    tb_loader_init(NULL, err, sizeof err) < 0 ||
	    tb_registry_open(cfg, err, sizeof err) < 0 ||
	    tb_tasks_init(cfg) < 0) {
		fprintf(stderr, "fuzz_tools: %s\n", err);
		abort();
	}
	inst = tb_registry_find("fz");
	atexit(cleanup);
	return 0;
}

/* A path made relative to the home, each ".." replaced. */
static void tame_path(json_t *args)
{
	const char *p = json_string_value(json_object_get(args, "path"));
	char buf[4200], *o = buf;

	if (!p)
		return;
	while (*p == '/')
		p++;
	for (; *p && o < buf + sizeof buf - 4; p++) {
		if (p[0] == '.' && p[1] == '.') {
			*o++ = '_';
			p++;
			continue;
		}
		*o++ = *p;
	}
	*o = '\0';
	json_object_set_new(args, "path", json_string(buf[0] ? buf : "f"));
}

/* The arguments, made harmless (see the top of the file). */
static void tame(json_t *args)
{
	json_t *v;

	if (!json_is_object(args))
		return;
	if ((v = json_object_get(args, "command")) && json_is_string(v))
		json_object_set_new(
		    args, "command",
		    json_string(
		        commands[json_string_length(v) %
		                 (sizeof commands / sizeof *commands)]));
	if ((v = json_object_get(args, "cwd")) && json_is_string(v))
		json_object_set_new(args, "cwd", json_string("."));
	tame_path(args);
	for (const char *const *k =
	         (const char *const[]){"wait", "timeout", NULL};
	     *k; k++)
		if ((v = json_object_get(args, *k)) && json_is_integer(v) &&
		    json_integer_value(v) > 2)
			json_object_set_new(args, *k, json_integer(2));
}

/* One tools/call for line (first byte: the tool). */
static void call(struct tb_mcp *s, const uint8_t *line, size_t len, int id)
{
	json_t *args, *msg;
	char *text;

	if (len == 0)
		return;
	args = json_loadb((const char *)line + 1, len - 1,
	                  JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (!args)
		args = json_stringn_nocheck((const char *)line + 1, len - 1);
	tame(args);
	msg = json_pack("{s:s, s:i, s:s, s:{s:s, s:o}}", "jsonrpc", "2.0", "id",
	                id, "method", "tools/call", "params", "name",
	                tools[(line[0] + 2u) % N_TOOLS], "arguments", args);
	text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	if (text)
		tb_mcp_handle_line(s, text, strlen(text));
	free(text);
	json_decref(msg);
}

/* Destroys every sandbox left under the root. */
static void destroy_all(void)
{
	DIR *d = opendir(root);
	struct dirent *e;
	char err[TASKBOX_ERRBUF_SIZE];

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strlen(e->d_name) == 32)
			inst->plugin->ops.destroy(inst->handle, e->d_name, err,
			                          sizeof err);
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char init[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":"
	    "{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}";
	static const char ready[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	struct tb_session *session = tb_session_new();
	struct tb_mcp_opts opts = {.write = check_output, .session = session};
	struct tb_mcp *s = session ? tb_mcp_new(&opts) : NULL;
	int id = 1, calls = 0;

	if (!s) {
		if (session)
			tb_session_end(session);
		return 0;
	}
	tb_mcp_handle_line(s, init, sizeof init - 1);
	tb_mcp_handle_line(s, ready, sizeof ready - 1);
	/* At most 8 calls an input: each may start a process. */
	for (size_t at = 0; at < size && calls < 8; calls++) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;

		call(s, data + at, len, id++);
		at += len + 1;
	}
	tb_mcp_free(s);
	tb_session_end(session);
	destroy_all();
	return 0;
}
