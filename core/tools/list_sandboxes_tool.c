/* list_sandboxes: the sandboxes a principal owns (an admin: any owner's,
 * or every owner's), from the providers' own listing, paged. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base64.h"
#include "base/principal.h"
#include "host/registry.h"
#include "host/sandbox_ref.h"
#include "tasks/ownership.h"
#include "tools/tasks.h"
#include "tools/tool.h"
#include "tools/tool_args.h"

#define PAGE_DEFAULT 50
#define PAGE_MAX 200
#define EVERY_OWNER "*"

static const char input[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
    "\"owner\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":255,"
    "\"description\":\"Whose sandboxes (taskbox:admin only for another "
    "principal's); \\\"*\\\" for every owner's. Default: the caller's.\"},"
    "\"cursor\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,"
    "\"description\":\"next_cursor of the previous page.\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":200,"
    "\"description\":\"Sandboxes per page (default 50).\"}}}";

#define NULLABLE_STR "{\"type\":[\"string\",\"null\"]}"
static const char output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"sandboxes\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"properties\":{\"sandbox_id\":{\"type\":\"string\"},"
    "\"provider\":{\"type\":\"string\"},"
    "\"owner\":" NULLABLE_STR ",\"created_at\":" NULLABLE_STR
    ",\"expires_at\":" NULLABLE_STR "},"
    "\"required\":[\"sandbox_id\",\"provider\",\"owner\",\"created_at\","
    "\"expires_at\"]}},"
    "\"unlisted\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"properties\":{\"provider\":{\"type\":\"string\"},"
    "\"error\":{\"type\":\"string\"}},"
    "\"required\":[\"provider\",\"error\"]}},"
    "\"next_cursor\":" NULLABLE_STR "},"
    "\"required\":[\"sandboxes\",\"unlisted\",\"next_cursor\"]}";

/* RFC 3339 UTC of Unix seconds t, or null when 0 (not known). */
static json_t *when(int64_t t)
{
	char buf[32];
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0 || !gmtime_r(&tt, &tm))
		return json_null();
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

struct collect {
	const struct tb_instance *inst;
	json_t *into;
};

static int collect_one(void *arg, const struct taskbox_sandbox_info *info)
{
	struct collect *c = arg;
	char id[TB_SANDBOX_REF_MAX];

	if (tb_sandbox_ref_format(c->inst->name, info->id, id, sizeof id) < 0)
		return 0;
	json_array_append_new(
	    c->into,
	    json_pack("{s:s, s:s, s:o, s:o, s:o}", "sandbox_id", id, "provider",
	              c->inst->name, "owner",
	              info->owner[0] ? json_string(info->owner) : json_null(),
	              "created_at", when(info->created_s), "expires_at",
	              when(info->expires_s)));
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;

	return strcmp(json_string_value(json_object_get(x, "sandbox_id")),
	              json_string_value(json_object_get(y, "sandbox_id")));
}

/* Sorts arr's objects by sandbox_id (the order pages follow). */
static json_t *sorted(json_t *arr)
{
	size_t n = json_array_size(arr);
	json_t **v = calloc(n ? n : 1, sizeof *v), *out = json_array();

	for (size_t i = 0; v && i < n; i++)
		v[i] = json_array_get(arr, i);
	if (v)
		qsort(v, n, sizeof *v, by_id);
	for (size_t i = 0; v && out && i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	json_decref(arr);
	return out;
}

/* The sandbox_id a cursor continues after, into after; -1 when it is not
 * a cursor this tool gave. */
static int cursor_decode(const char *cursor, char *after, size_t len)
{
	unsigned char *raw = NULL;
	size_t n = 0;
	struct tb_sandbox_ref ref;
	char why[256];
	int ok;

	if (!cursor) {
		after[0] = '\0';
		return 0;
	}
	if (tb_base64_decode(cursor, strlen(cursor), &raw, &n) < 0)
		return -1;
	ok = n > 0 && n < len && !memchr(raw, '\0', n);
	if (ok) {
		memcpy(after, raw, n);
		after[n] = '\0';
		ok = tb_sandbox_ref_parse(after, "cursor", &ref, why,
		                          sizeof why) == 0;
	}
	free(raw);
	return ok ? 0 : -1;
}

/* Whose sandboxes who may see: owner (NULL: who's own) checked against
 * who's scopes. Sets *filter (NULL: every owner's). */
static int owner_filter(const struct tb_principal *who, const char *owner,
                        const char **filter, char *err, size_t errlen)
{
	if (!owner || strcmp(owner, who->name) == 0) {
		*filter = who->name;
		return 0;
	}
	if (!tb_owner_is_admin(who)) {
		snprintf(err, errlen,
		         "owner: only a principal with taskbox:admin may list "
		         "another principal's sandboxes (or every owner's); "
		         "omit owner for your own");
		return -1;
	}
	*filter = strcmp(owner, EVERY_OWNER) == 0 ? NULL : owner;
	return 0;
}

/* Every instance's sandboxes of filter; instances that cannot say go to
 * unlisted with why. */
static json_t *gather(const char *filter, json_t *unlisted)
{
	json_t *all = json_array();
	char why[TB_ERR_MAX];

	for (size_t i = 0; i < tb_registry_count(); i++) {
		const struct tb_instance *inst = tb_registry_at(i);
		struct collect c = {inst, json_array()};

		if (tb_instance_list(inst, filter, collect_one, &c, why,
		                     sizeof why) == TASKBOX_OK)
			json_array_extend(all, c.into);
		else
			json_array_append_new(
			    unlisted, json_pack("{s:s, s:s}", "provider",
			                        inst->name, "error", why));
		json_decref(c.into);
	}
	return sorted(all);
}

/* The page of all after the sandbox_id after, limit long; *next is the
 * cursor of the next page or NULL. */
static json_t *page_of(json_t *all, const char *after, size_t limit,
                       char **next)
{
	json_t *page = json_array(), *e;
	size_t i;

	*next = NULL;
	json_array_foreach(all, i, e)
	{
		const char *id =
		    json_string_value(json_object_get(e, "sandbox_id"));
		if (after[0] && strcmp(id, after) <= 0)
			continue;
		if (json_array_size(page) == limit) {
			const char *last = json_string_value(json_object_get(
			    json_array_get(page, limit - 1), "sandbox_id"));
			*next = tb_base64_encode((const unsigned char *)last,
			                         strlen(last), NULL);
			break;
		}
		json_array_append(page, e);
	}
	return page;
}

static int list_sandboxes(tb_call *call, json_t *args, json_t **result)
{
	static const char *const known[] = {"owner", "cursor", "limit", NULL};
	const char *owner, *cursor, *filter;
	char err[TB_ERR_MAX], after[TB_SANDBOX_REF_MAX], *next;
	int64_t limit;

	if (tb_args_known(args, known, err, sizeof(err)) < 0 ||
	    tb_arg_str(args, "owner", false, 1, 255, &owner, err, sizeof(err)) <
	        0 ||
	    tb_arg_str(args, "cursor", false, 1, 256, &cursor, err,
	               sizeof(err)) < 0 ||
	    tb_arg_int(args, "limit", 1, PAGE_MAX, PAGE_DEFAULT, &limit, err,
	               sizeof(err)) < 0 ||
	    owner_filter(call->principal, owner, &filter, err, sizeof(err)) < 0)
		goto refuse;
	if (cursor_decode(cursor, after, sizeof after) < 0) {
		snprintf(err, sizeof(err),
		         "cursor: not a next_cursor that list_sandboxes "
		         "returned");
		goto refuse;
	}
	json_t *unlisted = json_array();
	json_t *all = gather(filter, unlisted);
	json_t *page = page_of(all, after, (size_t)limit, &next);
	json_decref(all);
	*result = json_pack("{s:o, s:o, s:o}", "sandboxes", page, "unlisted",
	                    unlisted, "next_cursor",
	                    next ? json_string(next) : json_null());
	free(next);
	return tb_result_or_oom(result);
refuse:
	*result = tb_error_json(err);
	return 1;
}

static const struct tb_tool tool = {
    .name = "list_sandboxes",
    .title = "List sandboxes",
    .description =
        "Lists the live sandboxes you own, on every provider instance, "
        "ordered by sandbox_id: each with its sandbox_id, provider "
        "instance, owner and RFC 3339 creation and expiry times (null "
        "when the provider does not say). An admin may pass owner (a "
        "principal's name, or \"*\" for every owner's). unlisted names "
        "instances that could not list theirs, and why. Pass next_cursor "
        "back as cursor for the next page; it is null on the last. Use it "
        "to find your sandboxes after losing their ids.",
    .input_schema = input,
    .output_schema = output,
    .annotations = "{\"title\":\"List sandboxes\","
                   "\"readOnlyHint\":true,\"openWorldHint\":false}",
    .scope = TB_SCOPE_READ,
    .fn = list_sandboxes,
};

int tb_list_sandboxes_tool_register(void)
{
	return tb_tools_register(&tool);
}
