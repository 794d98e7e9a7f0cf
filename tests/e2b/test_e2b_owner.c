/* Unit tests of the e2b plugin's ownership pieces: the owner rule, RFC 3339
 * times, a sandbox object of the API read into what describe and list
 * answer, and the metadata query list sends. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../../plugins/e2b/e2b_int.h"

Test(e2b_owner, the_owner_rule)
{
	char longest[TASKBOX_OWNER_MAX], too_long[TASKBOX_OWNER_MAX + 1];

	memset(longest, 'a', sizeof longest - 1);
	longest[sizeof longest - 1] = '\0';
	memset(too_long, 'a', sizeof too_long - 1);
	too_long[sizeof too_long - 1] = '\0';
	cr_expect(tb_e2b_valid_owner("alice@example.com"));
	cr_expect(tb_e2b_valid_owner("bob smith"));
	cr_expect(tb_e2b_valid_owner("team/ops:x=1&y%"));
	cr_expect(tb_e2b_valid_owner("\xc3\xbc\xe2\x82\xac\xf0\x9f\x98\x80"));
	cr_expect(tb_e2b_valid_owner(longest));
	cr_expect(!tb_e2b_valid_owner(too_long));
	cr_expect(!tb_e2b_valid_owner(""));
	cr_expect(!tb_e2b_valid_owner(NULL));
	cr_expect(!tb_e2b_valid_owner("a\nb"));
	cr_expect(!tb_e2b_valid_owner("a\tb"));
	cr_expect(!tb_e2b_valid_owner("\x7f"));
	cr_expect(!tb_e2b_valid_owner("c1 \xc2\x85"), "a C1 control");
	cr_expect(!tb_e2b_valid_owner("\xc3\x28"), "a broken sequence");
	cr_expect(!tb_e2b_valid_owner("\xc3"), "a cut sequence");
	cr_expect(!tb_e2b_valid_owner("\xe2\x82"), "a cut sequence");
	cr_expect(!tb_e2b_valid_owner("\xc0\xaf"), "an overlong form");
	cr_expect(!tb_e2b_valid_owner("\xed\xa0\x80"), "a surrogate");
	cr_expect(!tb_e2b_valid_owner("\xf4\x90\x80\x80"), "past U+10FFFF");
	cr_expect(!tb_e2b_valid_owner("\xff"));
}

Test(e2b_owner, rfc3339_times)
{
	int64_t t = 0;

	cr_assert_eq(tb_e2b_parse_time("1970-01-01T00:00:00Z", &t), 0);
	cr_expect_eq(t, 0);
	cr_assert_eq(tb_e2b_parse_time("2026-12-07T15:21:07.123Z", &t), 0);
	cr_expect_eq(t, 1796656867);
	cr_assert_eq(tb_e2b_parse_time("2026-12-07T15:21:07.123456789Z", &t),
	             0);
	cr_expect_eq(t, 1796656867);
	cr_assert_eq(tb_e2b_parse_time("2026-12-07T17:21:07+02:00", &t), 0);
	cr_expect_eq(t, 1796656867);
	cr_assert_eq(tb_e2b_parse_time("2000-02-29T23:59:59-00:30", &t), 0);
	cr_expect_eq(t, 951868799 + 1800);
	cr_expect_neq(tb_e2b_parse_time("2026-12-07 15:21", &t), 0);
	cr_expect_neq(tb_e2b_parse_time("2026-12-07T15:21:07", &t), 0);
	cr_expect_neq(tb_e2b_parse_time("2026-13-07T15:21:07Z", &t), 0);
	cr_expect_neq(tb_e2b_parse_time("2026-12-07T15:21:07.Z", &t), 0);
	cr_expect_neq(tb_e2b_parse_time("2026-12-07T15:21:07Zjunk", &t), 0);
	cr_expect_neq(tb_e2b_parse_time(NULL, &t), 0);
}

static int from(const char *text, char *id, struct tb_e2b_info *info)
{
	json_t *o = json_loads(text, 0, NULL);
	int ours;

	cr_assert(o, "%s", text);
	ours = tb_e2b_info_from_json(o, id, info);
	json_decref(o);
	return ours;
}

Test(e2b_owner, a_sandbox_object_read_into_info)
{
	char id[TASKBOX_SANDBOX_ID_MAX];
	struct tb_e2b_info info;

	cr_assert(from("{\"sandboxID\":\"iabc\",\"state\":\"running\","
	               "\"startedAt\":\"1970-01-01T00:01:00Z\","
	               "\"endAt\":\"1970-01-01T00:02:00.5Z\",\"metadata\":"
	               "{\"taskbox\":\"1\",\"taskbox_owner\":\"bob smith\"}}",
	               id, &info));
	cr_expect_str_eq(id, "iabc");
	cr_expect_str_eq(info.owner, "bob smith");
	cr_expect_eq(info.created_s, 60);
	cr_expect_eq(info.expires_s, 120);

	cr_assert(from("{\"sandboxID\":\"iabc\",\"state\":\"paused\","
	               "\"startedAt\":\"1970-01-01T00:01:00Z\","
	               "\"endAt\":\"1970-01-01T00:02:00Z\",\"metadata\":"
	               "{\"taskbox\":\"1\"}}",
	               id, &info));
	cr_expect_str_eq(info.owner, "", "no owner recorded");
	cr_expect_eq(info.expires_s, 0, "a paused sandbox has no expiry");

	cr_expect(!from("{\"sandboxID\":\"iabc\",\"metadata\":"
	                "{\"taskbox_owner\":\"bob\"}}",
	                id, &info),
	          "untagged: not taskbox's");
	cr_expect_str_eq(info.owner, "", "and its owner is not taken");
	cr_expect(!from("{\"sandboxID\":\"iabc\"}", id, &info));
	cr_expect(!from("{\"sandboxID\":\"a/b\",\"metadata\":"
	                "{\"taskbox\":\"1\"}}",
	                id, &info),
	          "a bad id");
	cr_expect(!from("{\"sandboxID\":\"iabc\",\"metadata\":"
	                "{\"taskbox\":\"1\",\"taskbox_owner\":\"a\\nb\"}}",
	                id, &info),
	          "an owner taskbox would not have written");
	cr_expect(!from("{\"sandboxID\":\"iabc\",\"metadata\":"
	                "{\"taskbox\":\"1\",\"taskbox_owner\":7}}",
	                id, &info));
}

Test(e2b_owner, info_out_fills_no_field_past_struct_size)
{
	struct tb_e2b_info info = {1, "alice", 10, 20};
	struct taskbox_sandbox_info out;

	memset(&out, 0x55, sizeof out);
	out.struct_size = offsetof(struct taskbox_sandbox_info, created_s);
	tb_e2b_info_out("iabc", &info, &out);
	cr_expect_str_eq(out.id, "iabc");
	cr_expect_str_eq(out.owner, "alice");
	cr_expect_eq(out.struct_size,
	             offsetof(struct taskbox_sandbox_info, created_s));
	cr_expect_eq(out.created_s, (int64_t)0x5555555555555555);
	out.struct_size = sizeof out;
	tb_e2b_info_out("iabc", &info, &out);
	cr_expect_eq(out.created_s, 10);
	cr_expect_eq(out.expires_s, 20);
}

Test(e2b_owner, the_metadata_query_is_escaped_as_the_sdk_does)
{
	char *q = tb_e2b_metadata_query(NULL);

	cr_assert(q);
	cr_expect_str_eq(q, "taskbox%3D1");
	free(q);
	q = tb_e2b_metadata_query("");
	cr_expect_str_eq(q, "taskbox%3D1");
	free(q);
	/* The service unescapes the parameter, the whole, then each part. */
	q = tb_e2b_metadata_query("bob smith/x&y=1%");
	cr_expect_str_eq(q, "taskbox%3D1%26taskbox_owner%3Dbob%252520smith%"
	                    "25252Fx%252526y%25253D1%252525");
	free(q);
}
