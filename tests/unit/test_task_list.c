/* Paging a newest-first task list, and the pause between two checks of a
 * waiting call. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tasks/task_list.h"
#include "tasks/task_wait.h"

/* n entries, task ids "<i repeated>" padded to 32 hex, started_at given. */
static json_t *entries(const int *started, const char *const *states, size_t n)
{
	json_t *all = json_array();

	for (size_t i = 0; i < n; i++) {
		char id[33];
		memset(id, "0123456789abcdef"[i % 16], 32);
		id[32] = '\0';
		json_array_append_new(
		    all, json_pack("{s:s,s:i,s:s}", "task_id", id, "started_at",
		                   started[i], "state", states[i]));
	}
	return all;
}

static const char *id_at(json_t *page, size_t i)
{
	return json_string_value(
	    json_object_get(json_array_get(page, i), "task_id"));
}

Test(task_list, sorts_newest_first_then_by_task_id)
{
	int started[] = {10, 30, 30, 20};
	const char *states[] = {"failed", "running", "running", "succeeded"};
	json_t *all = entries(started, states, 4);

	cr_assert_eq(tb_task_list_sort(all), 0);
	cr_assert_str_eq(id_at(all, 0), "22222222222222222222222222222222");
	cr_assert_str_eq(id_at(all, 1), "11111111111111111111111111111111");
	cr_assert_str_eq(id_at(all, 2), "33333333333333333333333333333333");
	cr_assert_str_eq(id_at(all, 3), "00000000000000000000000000000000");
	json_decref(all);
}

Test(task_list, pages_follow_the_cursor_and_end_with_none)
{
	int started[] = {50, 40, 30, 20, 10};
	const char *states[] = {"running", "failed", "running", "failed",
	                        "running"};
	json_t *all = entries(started, states, 5), *page;
	char next[TB_LIST_CURSOR_MAX], cursor[TB_LIST_CURSOR_MAX];

	cr_assert_eq(tb_task_list_page(all, NULL, NULL, 2, &page, next), 0);
	cr_assert_eq(json_array_size(page), 2);
	cr_assert_str_eq(next, "40-11111111111111111111111111111111");
	json_decref(page);
	snprintf(cursor, sizeof cursor, "%s", next);
	cr_assert_eq(tb_task_list_page(all, NULL, cursor, 2, &page, next), 0);
	cr_assert_str_eq(id_at(page, 0), "22222222222222222222222222222222");
	cr_assert_str_eq(id_at(page, 1), "33333333333333333333333333333333");
	json_decref(page);
	snprintf(cursor, sizeof cursor, "%s", next);
	cr_assert_eq(tb_task_list_page(all, NULL, cursor, 2, &page, next), 0);
	cr_assert_eq(json_array_size(page), 1);
	cr_assert_str_eq(next, "", "the last page has no next cursor");
	json_decref(page);
	/* A page exactly full at the end says so only when more follow. */
	cr_assert_eq(tb_task_list_page(all, NULL, NULL, 5, &page, next), 0);
	cr_assert_str_eq(next, "");
	json_decref(page);
	json_decref(all);
}

Test(task_list, a_task_started_meanwhile_does_not_shift_a_page)
{
	int started[] = {50, 40, 30};
	const char *states[] = {"running", "running", "running"};
	json_t *all = entries(started, states, 3), *page;
	char next[TB_LIST_CURSOR_MAX], cursor[TB_LIST_CURSOR_MAX];

	cr_assert_eq(tb_task_list_page(all, NULL, NULL, 1, &page, next), 0);
	json_decref(page);
	snprintf(cursor, sizeof cursor, "%s", next);
	json_array_insert_new(all, 0,
	                      json_pack("{s:s,s:i,s:s}", "task_id",
	                                "ffffffffffffffffffffffffffffffff",
	                                "started_at", 60, "state", "running"));
	cr_assert_eq(tb_task_list_page(all, NULL, cursor, 1, &page, next), 0);
	cr_assert_str_eq(id_at(page, 0), "11111111111111111111111111111111");
	json_decref(page);
	json_decref(all);
}

Test(task_list, the_state_filter_and_bad_cursors)
{
	int started[] = {50, 40, 30};
	const char *states[] = {"running", "failed", "failed"};
	json_t *all = entries(started, states, 3), *page;
	char next[TB_LIST_CURSOR_MAX];
	const char *bad[] = {"",
	                     "x",
	                     "40",
	                     "40-1111",
	                     "40-11111111111111111111111111111111x",
	                     "40-1111111111111111111111111111111G",
	                     "-5-11111111111111111111111111111111",
	                     NULL};

	cr_assert_eq(tb_task_list_page(all, "failed", NULL, 10, &page, next),
	             0);
	cr_assert_eq(json_array_size(page), 2);
	cr_assert_str_eq(id_at(page, 0), "11111111111111111111111111111111");
	json_decref(page);
	for (int i = 0; bad[i]; i++) {
		cr_assert_eq(
		    tb_task_list_page(all, NULL, bad[i], 10, &page, next), -1,
		    "cursor '%s'", bad[i]);
		cr_assert_null(page);
	}
	json_decref(all);
}

Test(task_wait, the_pause_is_ten_times_a_check_within_bounds)
{
	cr_assert_eq(tb_wait_interval_ms(100, 60000), TB_WAIT_MIN_MS);
	cr_assert_eq(tb_wait_interval_ms(5000, 60000), 50);
	cr_assert_eq(tb_wait_interval_ms(10000000, 60000), TB_WAIT_MAX_MS);
	cr_assert_eq(tb_wait_interval_ms(5000, 7), 7, "never past the limit");
}
