/* The verbs' command line: options, their values and the argument rules. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sup.h"

struct option_rule {
	const char *name;
	size_t offset;
};

#define OPT(field) offsetof(struct tb_opts, field)

/* The most optional options of one verb. */
#define OPTIONAL_MAX 6

/* Required options first, then optional ones, per verb. */
struct verb_rule {
	const char *verb;
	struct option_rule required[4], optional[OPTIONAL_MAX];
};

static const struct verb_rule verbs[] = {
    {"start",
     {{"--root", OPT(root)},
      {"--id", OPT(id)},
      {"--timeout", OPT(timeout)},
      {"--command", OPT(command)}},
     {{"--cwd", OPT(cwd)},
      {"--stdin", OPT(stdin_mode)},
      {"--rows", OPT(rows)},
      {"--cols", OPT(cols)},
      {"--key", OPT(key)},
      {"--request", OPT(request)}}},
    {"cancel",
     {{"--root", OPT(root)}, {"--id", OPT(id)}},
     {{"--wait", OPT(wait)}}},
    {"write",
     {{"--root", OPT(root)}, {"--id", OPT(id)}},
     {{"--data", OPT(data)}, {"--eof", OPT(eof)}}},
    {"resize",
     {{"--root", OPT(root)},
      {"--id", OPT(id)},
      {"--rows", OPT(rows)},
      {"--cols", OPT(cols)}},
     {{NULL, 0}}},
    {"remove", {{"--root", OPT(root)}, {"--id", OPT(id)}}, {{NULL, 0}}},
    {"list", {{"--root", OPT(root)}}, {{NULL, 0}}},
    {"wait",
     {{"--root", OPT(root)}, {"--id", OPT(id)}},
     {{"--wait", OPT(wait)},
      {"--stdout-offset", OPT(stdout_offset)},
      {"--stderr-offset", OPT(stderr_offset)},
      {"--page-limit", OPT(page_limit)},
      {"--stdout-page-offset", OPT(stdout_page_offset)},
      {"--stderr-page-offset", OPT(stderr_page_offset)}}},
    {"watch",
     {{"--root", OPT(root)}, {"--tasks", OPT(tasks)}},
     {{"--wait", OPT(wait)},
      {"--lease", OPT(lease)},
      {"--generation", OPT(generation)}}},
};

static const char **slot(struct tb_opts *o, size_t offset)
{
	return (const char **)((char *)o + offset);
}

/* The option's slot in O for VERB, or NULL when VERB does not take it. */
static const char **find_option(const struct verb_rule *v, struct tb_opts *o,
                                const char *name, size_t name_len)
{
	for (size_t i = 0; i < 4 && v->required[i].name; i++)
		if (strlen(v->required[i].name) == name_len &&
		    memcmp(v->required[i].name, name, name_len) == 0)
			return slot(o, v->required[i].offset);
	for (size_t i = 0; i < OPTIONAL_MAX && v->optional[i].name; i++)
		if (strlen(v->optional[i].name) == name_len &&
		    memcmp(v->optional[i].name, name, name_len) == 0)
			return slot(o, v->optional[i].offset);
	return NULL;
}

void tb_check_path(const char *name, const char *value)
{
	if (!*value)
		tb_refuse(TB_INVALID, "%s: must not be empty", name);
	if (strlen(value) > TB_MAX_PATH)
		tb_refuse(TB_INVALID, "%s: longer than %d bytes", name,
		          TB_MAX_PATH);
}

static void check_id(const char *id)
{
	if (!tb_is_task_name(id))
		tb_refuse(TB_INVALID,
		          "--id: must be 32 lowercase hexadecimal characters");
}

long long tb_int_option(const char *name, const char *value, long long low,
                        long long high)
{
	const char *p = value;
	long long n = 0;

	while (*p == '0' && p[1])
		p++;
	if (!*value || strspn(p, "0123456789") != strlen(p) || strlen(p) > 12)
		goto bad;
	n = strtoll(p, NULL, 10);
	if (n >= low && n <= high)
		return n;
bad:
	tb_refuse(TB_INVALID, "%s: must be an integer from %lld to %lld", name,
	          low, high);
}

void tb_args_parse(int argc, char **argv, struct tb_opts *o)
{
	const struct verb_rule *v = NULL;

	memset(o, 0, sizeof(*o));
	o->verb = argv[1];
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].verb, argv[1]) == 0)
			v = &verbs[i];
	for (int i = 2; i < argc;) {
		const char *arg = argv[i], *eq = strchr(arg, '='), *value;
		size_t name_len;
		const char **dst;

		if (eq && strncmp(arg, "--", 2) == 0) {
			name_len = (size_t)(eq - arg);
			value = eq + 1;
			i += 1;
		} else {
			name_len = strlen(arg);
			if (i + 1 >= argc)
				tb_refuse(TB_INVALID, "%.200s: missing value",
				          arg);
			value = argv[i + 1];
			i += 2;
		}
		dst = find_option(v, o, arg, name_len);
		if (!dst)
			tb_refuse(TB_INVALID, "%.*s: unknown option for %s",
			          (int)(name_len > 200 ? 200 : name_len), arg,
			          o->verb);
		if (*dst)
			tb_refuse(TB_INVALID, "%.*s: given twice",
			          (int)name_len, arg);
		*dst = value;
	}
	for (size_t i = 0; i < 4 && v->required[i].name; i++)
		if (!*slot(o, v->required[i].offset))
			tb_refuse(TB_INVALID, "%s: required by %s",
			          v->required[i].name, o->verb);
	tb_check_path("--root", o->root);
	if (o->id)
		check_id(o->id);
}

void tb_check_request(const char *key, const char *request)
{
	size_t n = strlen(request);

	if (!key)
		tb_refuse(TB_INVALID, "--request: only with --key");
	if (n < 1 || n > TB_MAX_REQUEST ||
	    strspn(request, TB_REQUEST_CHARS) != n)
		tb_refuse(TB_INVALID,
		          "--request: must be 1 to %d characters from a-z, "
		          "0-9 and '-'",
		          TB_MAX_REQUEST);
}

void tb_check_key(const char *key)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                            "abcdefghijklmnopqrstuvwxyz0123456789_.-";
	size_t n = strlen(key);

	if (n < 1 || n > TB_MAX_KEY || strspn(key, chars) != n)
		tb_refuse(TB_INVALID,
		          "--key: must be 1 to %d characters from A-Z, a-z, "
		          "0-9, '_', '.' and '-'",
		          TB_MAX_KEY);
}
