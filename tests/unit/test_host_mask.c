/* Host-side masking of configured values. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/host_mask.h"

static char *mask(const struct tb_mask *m, const char *in)
{
	unsigned char *out;
	size_t n;

	cr_assert_eq(
	    tb_mask_apply(m, (const unsigned char *)in, strlen(in), &out, &n),
	    0);
	cr_assert_eq(strlen((char *)out), n);
	return (char *)out;
}

static void expect(const struct tb_mask *m, const char *in, const char *want)
{
	char *got = mask(m, in);

	cr_assert_str_eq(got, want);
	free(got);
}

Test(host_mask, masks_every_occurrence)
{
	const char *v[] = {"hunter22"};
	struct tb_mask *m = tb_mask_new(v, 1);

	expect(m, "pw=hunter22 again hunter22.", "pw=**** again ****.");
	expect(m, "hunter2", "hunter2");
	expect(m, "", "");
	tb_mask_free(m);
}

Test(host_mask, longest_value_wins_and_short_values_are_ignored)
{
	const char *v[] = {"abcd", "abcdefgh", "xyz", "", NULL};
	struct tb_mask *m = tb_mask_new(v, 5);

	expect(m, "1abcdefgh2abcd3xyz", "1****2****3xyz");
	tb_mask_free(m);
}

Test(host_mask, no_values_copies_the_page)
{
	expect(NULL, "anything", "anything");
	struct tb_mask *m = tb_mask_new(NULL, 0);

	expect(m, "same", "same");
	tb_mask_free(m);
}

Test(host_mask, binary_pages_keep_their_bytes)
{
	const char *v[] = {"s3cr"};
	struct tb_mask *m = tb_mask_new(v, 1);
	const unsigned char in[] = {0, 's', '3', 'c', 'r', 0, 0xff};
	unsigned char *out;
	size_t n;

	cr_assert_eq(tb_mask_apply(m, in, sizeof(in), &out, &n), 0);
	cr_assert_eq(n, 7);
	cr_assert(memcmp(out, "\0****\0\xff", 7) == 0);
	free(out);
	tb_mask_free(m);
}

Test(host_mask, a_value_cut_by_the_page_edge_is_not_seen)
{
	const char *v[] = {"secretvalue"};
	struct tb_mask *m = tb_mask_new(v, 1);

	expect(m, "...secret", "...secret");
	tb_mask_free(m);
}
