/* taskbox-supervisor: the native supervisor's entry and its refusals. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sup.h"

static const char *const code_names[] = {
    [TB_INTERNAL] = "internal",   [TB_INVALID] = "invalid",
    [TB_LIMIT] = "limit",         [TB_EXISTS] = "exists",
    [TB_NOT_FOUND] = "not_found", [TB_RUNNING] = "running",
    [TB_CLOSED] = "closed"};

static const char usage[] =
    "usage: start --root DIR --id ID --timeout SECONDS [--cwd DIR] "
    "--command TEXT [--stdin null|pipe|tty] [--rows N --cols N] "
    "[--key KEY [--request DIGEST]] | cancel --root DIR --id ID "
    "[--wait SECONDS] | "
    "write --root DIR --id ID [--data BASE64|-] [--eof 0|1] | "
    "resize --root DIR --id ID --rows N --cols N | "
    "remove --root DIR --id ID | list --root DIR | "
    "wait --root DIR --id ID [--wait SECONDS] [--stdout-offset BYTES] "
    "[--stderr-offset BYTES] [--page-limit BYTES] "
    "[--stdout-page-offset BYTES] [--stderr-page-offset BYTES] | "
    "watch --root DIR --tasks ID/SO/EO/PL/SPO/EPO,... [--wait SECONDS] "
    "[--lease NAME --generation N]";

_Noreturn void tb_refuse(enum tb_code code, const char *fmt, ...)
{
	char msg[TB_MSG_MAX * 5];
	struct tb_str out = {0};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tb_str_cstr(&out, "{\"error\":");
	tb_json_str(&out, msg, strlen(msg));
	tb_str_cstr(&out, ",\"code\":");
	tb_json_str(&out, code_names[code], strlen(code_names[code]));
	tb_str_cstr(&out, "}");
	tb_say(&out);
	tb_str_free(&out);
	exit(code);
}

_Noreturn void tb_oom(void)
{
	static const char line[] = "{\"error\":\"internal error: out of "
	                           "memory\",\"code\":\"internal\"}\n";

	if (write(1, line, sizeof(line) - 1) < 0)
		_exit(TB_INTERNAL);
	_exit(TB_INTERNAL);
}

int main(int argc, char **argv)
{
	struct tb_opts opts;

	if (argc > 1 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	     strcmp(argv[1], "help") == 0)) {
		struct tb_str out = {0};

		tb_str_cstr(&out, "{\"usage\":");
		tb_json_str(&out, usage, strlen(usage));
		tb_str_cstr(&out, "}");
		tb_say(&out);
		tb_str_free(&out);
		return 0;
	}
	if (argc < 2)
		tb_refuse(TB_INVALID, "missing verb; %s", usage);
	if (strcmp(argv[1], "start") && strcmp(argv[1], "cancel") &&
	    strcmp(argv[1], "write") && strcmp(argv[1], "resize") &&
	    strcmp(argv[1], "remove") && strcmp(argv[1], "list") &&
	    strcmp(argv[1], "wait") && strcmp(argv[1], "watch"))
		tb_refuse(TB_INVALID, "unknown verb '%.200s'; %s", argv[1],
		          usage);
	tb_args_parse(argc, argv, &opts);
	if (strcmp(opts.verb, "start") == 0)
		return tb_verb_start(&opts);
	if (strcmp(opts.verb, "cancel") == 0)
		return tb_verb_cancel(&opts);
	if (strcmp(opts.verb, "write") == 0)
		return tb_verb_write(&opts);
	if (strcmp(opts.verb, "resize") == 0)
		return tb_verb_resize(&opts);
	if (strcmp(opts.verb, "remove") == 0)
		return tb_verb_remove(&opts);
	if (strcmp(opts.verb, "wait") == 0)
		return tb_verb_wait(&opts);
	if (strcmp(opts.verb, "watch") == 0)
		return tb_verb_watch(&opts);
	return tb_verb_list(&opts);
}
