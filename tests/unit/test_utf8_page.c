/* UTF-8 repair of byte pages: every split of every sequence length. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8_page.h"

#define FFFD "\xEF\xBF\xBD"

static char *repair(const char *in, size_t len)
{
	char *out;
	size_t n;

	cr_assert_eq(tb_utf8_repair((const unsigned char *)in, len, &out, &n),
	             0);
	cr_assert_eq(strlen(out), n);
	return out;
}

static void expect(const char *in, size_t len, const char *want)
{
	char *got = repair(in, len);

	cr_assert_str_eq(got, want, "input of %zu bytes", len);
	free(got);
}

Test(utf8_page, valid_text_is_unchanged)
{
	const char *s = "plain \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 end";

	expect(s, strlen(s), s);
	expect("", 0, "");
}

/* Splits "a<seq>b" at every byte position: the left page must end with
 * exactly one U+FFFD for a cut sequence, the right page must start with one
 * U+FFFD per orphan continuation byte, and an unsplit page is untouched. */
static void check_splits(const char *seq)
{
	char text[16];
	size_t seqlen = strlen(seq), len, cut, k;

	len = (size_t)snprintf(text, sizeof(text), "a%sb", seq);
	for (cut = 0; cut <= len; cut++) {
		char want_left[64] = "", want_right[64] = "";
		int inside = cut > 1 && cut < 1 + seqlen;

		if (inside) {
			strcpy(want_left, "a" FFFD);
			for (k = cut; k < 1 + seqlen; k++)
				strcat(want_right, FFFD);
			strcat(want_right, "b");
		} else {
			memcpy(want_left, text, cut);
			want_left[cut] = '\0';
			strcpy(want_right, text + cut);
		}
		expect(text, cut, want_left);
		expect(text + cut, len - cut, want_right);
	}
}

Test(utf8_page, two_byte_sequence_split_everywhere)
{
	check_splits("\xC3\xA9");
}

Test(utf8_page, three_byte_sequence_split_everywhere)
{
	check_splits("\xE2\x82\xAC");
	check_splits("\xED\x9F\xBF"); /* U+D7FF, the last before surrogates */
}

Test(utf8_page, four_byte_sequence_split_everywhere)
{
	check_splits("\xF0\x9F\x98\x80");
	check_splits("\xF4\x8F\xBF\xBF"); /* U+10FFFF */
}

Test(utf8_page, invalid_bytes_each_become_one_replacement)
{
	expect("\xFF", 1, FFFD);
	expect("a\xC0\xAF"
	       "b",
	       4, "a" FFFD FFFD "b");                       /* overlong '/' */
	expect("\xED\xA0\x80", 3, FFFD FFFD FFFD);          /* a surrogate */
	expect("\xF4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD); /* > U+10FFFF */
	expect("\xE2\x82"
	       "x",
	       3, FFFD "x"); /* maximal subpart then ASCII */
	expect("\xF5", 1, FFFD);
}

Test(utf8_page, nul_bytes_survive_into_json)
{
	json_t *s = tb_utf8_page_json((const unsigned char *)"a\0b", 3);

	cr_assert_not_null(s);
	cr_assert_eq(json_string_length(s), 3);
	cr_assert_eq(json_string_value(s)[1], '\0');
	json_decref(s);
}

Test(utf8_page, same_bytes_same_page)
{
	const char *page = "x\xF0\x9F";
	char *a = repair(page, 3), *b = repair(page, 3);

	cr_assert_str_eq(a, b);
	cr_assert_str_eq(a, "x" FFFD);
	free(a);
	free(b);
}
