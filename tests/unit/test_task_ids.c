/* Task ids, idempotency keys and sandbox ids: generation, validation,
 * splitting; the ring of sandbox/task pairs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "host/sandbox_ref.h"
#include "tasks/task_id.h"
#include "tasks/task_ring.h"

#define ID_A "0123456789abcdef0123456789abcdef"

Test(task_id, fresh_ids_are_valid_and_distinct)
{
	char a[TB_TASK_ID_LEN + 1], b[TB_TASK_ID_LEN + 1];

	cr_assert_eq(tb_task_id_new(a), 0);
	cr_assert_eq(tb_task_id_new(b), 0);
	cr_assert_eq(strlen(a), 32);
	cr_assert(tb_task_id_valid(a), "%s", a);
	cr_assert(tb_task_id_valid(b), "%s", b);
	cr_assert_str_neq(a, b);
}

Test(task_id, all_hex_digits_appear_over_many_ids)
{
	char id[TB_TASK_ID_LEN + 1];
	int seen[16] = {0}, i, j, n = 0;

	for (i = 0; i < 64; i++) {
		cr_assert_eq(tb_task_id_new(id), 0);
		for (j = 0; j < TB_TASK_ID_LEN; j++)
			seen[id[j] <= '9' ? id[j] - '0' : id[j] - 'a' + 10] = 1;
	}
	for (i = 0; i < 16; i++)
		n += seen[i];
	cr_assert_eq(n, 16);
}

Test(task_id, malformed_ids_are_refused)
{
	cr_assert(tb_task_id_valid("0123456789abcdef0123456789abcdef"));
	cr_assert_not(tb_task_id_valid(NULL));
	cr_assert_not(tb_task_id_valid(""));
	cr_assert_not(tb_task_id_valid("0123456789abcdef0123456789abcde"));
	cr_assert_not(tb_task_id_valid("0123456789abcdef0123456789abcdef0"));
	cr_assert_not(tb_task_id_valid("0123456789ABCDEF0123456789abcdef"));
	cr_assert_not(tb_task_id_valid("0123456789abcdeg0123456789abcdef"));
	cr_assert_not(tb_task_id_valid("../../../../etc/passwd/0123456789a"));
}

Test(sandbox_ref, splits_a_full_id)
{
	struct tb_sandbox_ref ref;
	char err[256];

	cr_assert_eq(tb_sandbox_ref_parse("local:Ab9_.-x", "sandbox_id", &ref,
	                                  err, sizeof(err)),
	             0, "%s", err);
	cr_assert_str_eq(ref.instance, "local");
	cr_assert_str_eq(ref.native, "Ab9_.-x");
}

Test(sandbox_ref, refuses_broken_ids_naming_the_field)
{
	static const char *bad[] = {
	    "",           "local",       ":abc",          "Local:abc",
	    "9x:abc",     "local:",      "local:a/b",     "local:a:b",
	    "lo cal:abc", "local:..\\x", "local:abc def",
	};
	struct tb_sandbox_ref ref;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(tb_sandbox_ref_parse(bad[i], "sandbox_id", &ref,
		                                  err, sizeof(err)),
		             -1, "%s accepted", bad[i]);
		cr_assert(strncmp(err, "sandbox_id: ", 12) == 0, "%s", err);
	}
}

Test(sandbox_ref, length_limits)
{
	char inst[40], native[200], full[300], err[256];
	struct tb_sandbox_ref ref;

	memset(inst, 'a', 32);
	inst[32] = '\0';
	memset(native, 'N', 127);
	native[127] = '\0';
	snprintf(full, sizeof(full), "%s:%s", inst, native);
	cr_assert_eq(tb_sandbox_ref_parse(full, "f", &ref, err, sizeof(err)), 0,
	             "%s", err);
	cr_assert_str_eq(ref.native, native);
	snprintf(full, sizeof(full), "%sa:%s", inst, native);
	cr_assert_eq(tb_sandbox_ref_parse(full, "f", &ref, err, sizeof(err)),
	             -1);
	snprintf(full, sizeof(full), "%s:%sN", inst, native);
	cr_assert_eq(tb_sandbox_ref_parse(full, "f", &ref, err, sizeof(err)),
	             -1);
	cr_assert(tb_instance_name_valid("w-1_x"));
	cr_assert_not(tb_instance_name_valid("w:1"));
	cr_assert_not(tb_native_id_valid(""));
}

Test(sandbox_ref, formats_and_round_trips)
{
	char out[TB_SANDBOX_REF_MAX], err[128];
	struct tb_sandbox_ref ref;

	cr_assert_eq(
	    tb_sandbox_ref_format("docker", "c0ffee", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "docker:c0ffee");
	cr_assert_eq(tb_sandbox_ref_parse(out, "f", &ref, err, sizeof(err)), 0);
	cr_assert_str_eq(ref.instance, "docker");
	cr_assert_eq(
	    tb_sandbox_ref_format("docker", "bad/id", out, sizeof(out)), -1);
	cr_assert_eq(tb_sandbox_ref_format("Docker", "ok", out, sizeof(out)),
	             -1);
}

Test(task_key, takes_the_documented_alphabet_and_length)
{
	char key[TB_TASK_KEY_MAX + 2];

	cr_assert(tb_task_key_valid("a"));
	cr_assert(tb_task_key_valid("Deploy_2026-12.01"));
	cr_assert(tb_task_key_valid(".."));
	cr_assert_not(tb_task_key_valid(""));
	cr_assert_not(tb_task_key_valid("a/b"));
	cr_assert_not(tb_task_key_valid("a b"));
	cr_assert_not(tb_task_key_valid("caf\xc3\xa9"));
	memset(key, 'k', TB_TASK_KEY_MAX);
	key[TB_TASK_KEY_MAX] = '\0';
	cr_assert(tb_task_key_valid(key));
	key[TB_TASK_KEY_MAX] = 'k';
	key[TB_TASK_KEY_MAX + 1] = '\0';
	cr_assert_not(tb_task_key_valid(key));
}

Test(task_ring, remembers_pairs_and_forgets_the_oldest)
{
	static struct tb_task_ring ring = TB_TASK_RING_INIT;
	char task[TB_TASK_ID_LEN + 1];

	cr_assert(tb_task_ring_add(&ring, "local:a", ID_A));
	cr_assert_not(tb_task_ring_add(&ring, "local:a", ID_A));
	cr_assert(tb_task_ring_has(&ring, "local:a", ID_A));
	cr_assert_not(tb_task_ring_has(&ring, "local:b", ID_A));
	for (unsigned i = 0; i < TB_TASK_RING_MAX; i++) {
		snprintf(task, sizeof(task), "%032x", i + 1);
		tb_task_ring_add(&ring, "local:b", task);
	}
	cr_assert_not(tb_task_ring_has(&ring, "local:a", ID_A));
	cr_assert(tb_task_ring_has(&ring, "local:b", task));
	tb_task_ring_add(&ring, "local:bb", ID_A);
	tb_task_ring_forget_sandbox(&ring, "local:b");
	cr_assert_not(tb_task_ring_has(&ring, "local:b", task));
	cr_assert(tb_task_ring_has(&ring, "local:bb", ID_A));
}
