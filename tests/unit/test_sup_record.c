/* Supervisor status records, the cache of parsed ones, error objects and
 * /proc stat lines. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tasks/box.h"
#include "tasks/record_cache.h"
#include "tasks/sup_record.h"

#define ID "0123456789abcdef0123456789abcdef"

static const char *running =
    "{\"format\":1,\"task_id\":\"" ID "\",\"state\":\"running\","
    "\"command\":\"sleep 5\",\"cwd\":null,\"timeout\":300,"
    "\"started_at\":1700000000,\"finished_at\":null,\"exit_code\":null,"
    "\"supervisor_pid\":4242,\"supervisor_start\":987654,\"pgid\":4243,"
    "\"pgid_start\":987655,\"stdout_bytes\":0,\"stderr_bytes\":0,"
    "\"stdout_truncated\":false,\"stderr_truncated\":false,"
    "\"cancel_requested\":false,\"error\":null}";

Test(sup_record, parses_a_running_record)
{
	struct tb_task_record r;
	char err[256];

	cr_assert_eq(tb_task_record_parse(running, strlen(running), ID, &r, err,
	                                  sizeof(err)),
	             0, "%s", err);
	cr_assert_eq(r.state, TB_TASK_RUNNING);
	cr_assert_str_eq(r.command, "sleep 5");
	cr_assert_eq(r.started_at, 1700000000);
	cr_assert_eq(r.finished_at, -1);
	cr_assert_eq(r.exit_code, -1);
	cr_assert_eq(r.supervisor_pid, 4242);
	cr_assert_eq(r.supervisor_start, 987654);
	cr_assert_null(r.error);
	tb_task_record_clear(&r);
}

Test(sup_record, parses_a_finished_record)
{
	const char *t = "{\"format\":1,\"task_id\":\"" ID "\","
	                "\"state\":\"failed\",\"exit_code\":137,"
	                "\"started_at\":5,\"finished_at\":9,"
	                "\"stdout_bytes\":1048576,\"stderr_bytes\":3,"
	                "\"stdout_truncated\":true,\"error\":\"boom\"}";
	struct tb_task_record r;
	char err[256];

	cr_assert_eq(
	    tb_task_record_parse(t, strlen(t), NULL, &r, err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_eq(r.state, TB_TASK_FAILED);
	cr_assert_eq(r.exit_code, 137);
	cr_assert_eq(r.stdout_bytes, 1048576);
	cr_assert(r.stdout_truncated);
	cr_assert_not(r.stderr_truncated);
	cr_assert_str_eq(r.error, "boom");
	cr_assert(tb_task_state_terminal(r.state));
	tb_task_record_clear(&r);
}

Test(sup_record, refuses_broken_records)
{
	static const char *bad[] = {
	    "",
	    "[]",
	    "{\"format\":2,\"task_id\":\"" ID "\",\"state\":\"failed\"}",
	    "{\"format\":1,\"task_id\":\"XYZ\",\"state\":\"failed\"}",
	    "{\"format\":1,\"task_id\":\"" ID "\",\"state\":\"unknown\"}",
	    "{\"format\":1,\"task_id\":\"" ID "\",\"state\":\"done\"}",
	    "{\"format\":1,\"task_id\":\"" ID "\",\"state\":\"failed\","
	    "\"exit_code\":\"1\"}",
	    "{\"format\":1,\"task_id\":\"" ID "\",\"state\":\"failed\","
	    "\"started_at\":-3}",
	    "{\"format\":1,\"task_id\":\"" ID "\",\"state\":\"running\"}",
	    "{\"format\":1,\"task_id\":\"" ID "\",\"state\":\"failed\","
	    "\"error\":7}",
	    "{\"format\":1,\"task_id\":\"" ID "\",\"state\":\"failed\","
	    "\"stdout_truncated\":1}",
	};
	struct tb_task_record r;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(tb_task_record_parse(bad[i], strlen(bad[i]), NULL,
		                                  &r, err, sizeof(err)),
		             -1, "accepted: %s", bad[i]);
		cr_assert_neq(err[0], '\0');
		cr_assert_null(r.json);
	}
}

Test(sup_record, refuses_another_tasks_record)
{
	struct tb_task_record r;
	char err[256];

	cr_assert_eq(tb_task_record_parse(running, strlen(running),
	                                  "ffffffffffffffffffffffffffffffff",
	                                  &r, err, sizeof(err)),
	             -1);
	cr_assert(strstr(err, "not the task") != NULL, "%s", err);
}

/* The record as text with state and exit code filled in. */
static void record_text(char *buf, size_t len, const char *id,
                        const char *state, int exit_code)
{
	snprintf(buf, len,
	         "{\"format\":1,\"task_id\":\"%s\",\"state\":\"%s\","
	         "\"exit_code\":%d,\"started_at\":5,\"command\":\"x\","
	         "\"supervisor_pid\":42,\"supervisor_start\":7}",
	         id, state, exit_code);
}

Test(record_cache, the_same_bytes_give_the_same_record_without_a_parse)
{
	struct tb_task_record a, b, c;
	char text[256], err[256];

	record_text(text, sizeof text, ID, "running", 0);
	cr_assert_eq(
	    tb_record_cache_parse(text, strlen(text), ID, &a, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(
	    tb_record_cache_parse(text, strlen(text), ID, &b, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(a.json, b.json,
	             "the second read was answered from the "
	             "cache");
	cr_assert_eq(b.state, TB_TASK_RUNNING);
	cr_assert_str_eq(b.command, "x");
	/* Changed bytes (the task ended) are parsed again. */
	record_text(text, sizeof text, ID, "failed", 3);
	cr_assert_eq(
	    tb_record_cache_parse(text, strlen(text), ID, &c, err, sizeof err),
	    0, "%s", err);
	cr_assert_neq(c.json, a.json);
	cr_assert_eq(c.state, TB_TASK_FAILED);
	cr_assert_eq(c.exit_code, 3);
	/* Records handed out stay valid whatever the cache does. */
	tb_record_cache_clear();
	cr_assert_eq(a.state, TB_TASK_RUNNING);
	cr_assert_str_eq(a.command, "x");
	tb_task_record_clear(&a);
	tb_task_record_clear(&b);
	tb_task_record_clear(&c);
}

Test(record_cache, rules_hold_and_many_tasks_fit)
{
	struct tb_task_record r;
	char text[256], err[256], id[40];

	record_text(text, sizeof text, ID, "running", 0);
	cr_assert_eq(
	    tb_record_cache_parse(text, strlen(text), ID, &r, err, sizeof err),
	    0);
	tb_task_record_clear(&r);
	/* The same bytes asked for as another task's record: refused. */
	cr_assert_eq(tb_record_cache_parse(text, strlen(text),
	                                   "ffffffffffffffffffffffffffffffff",
	                                   &r, err, sizeof err),
	             -1);
	cr_assert(strstr(err, "not the task asked for"), "%s", err);
	/* More tasks than slots: every answer is still its own record. */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 100; i++) {
			snprintf(id, sizeof id, "%032x", i);
			record_text(text, sizeof text, id, "succeeded", i);
			cr_assert_eq(tb_record_cache_parse(text, strlen(text),
			                                   id, &r, err,
			                                   sizeof err),
			             0, "%s", err);
			cr_assert_str_eq(r.task_id, id);
			cr_assert_eq(r.exit_code, i);
			tb_task_record_clear(&r);
		}
	tb_record_cache_clear();
}

/* Parses text (a record with the given log sizes) through the cache. */
static void cached(struct tb_task_record *r, const char *state, int out,
                   int err_bytes)
{
	char text[384], err[256];

	snprintf(text, sizeof text,
	         "{\"format\":1,\"task_id\":\"" ID "\",\"state\":\"%s\","
	         "\"exit_code\":0,\"started_at\":5,\"stdout_bytes\":%d,"
	         "\"stderr_bytes\":%d,\"supervisor_pid\":42,"
	         "\"supervisor_start\":7}",
	         state, out, err_bytes);
	cr_assert_eq(
	    tb_record_cache_parse(text, strlen(text), ID, r, err, sizeof err),
	    0, "%s", err);
}

/* Pages of stream kept with r: asserts a hit giving want. */
static void page_is(const struct tb_task_record *r, enum tb_log_stream s,
                    uint64_t offset, size_t limit, const char *want)
{
	struct taskbox_buf page;

	cr_assert_eq(tb_record_cache_log_page(r, s, offset, limit, &page), 1);
	cr_assert_eq(page.len, strlen(want));
	cr_assert(page.len == 0 || memcmp(page.data, want, page.len) == 0);
	tb_buf_free(&page);
}

Test(record_cache, a_finished_tasks_whole_logs_page_from_memory)
{
	struct tb_task_record run, fin, again, other;
	struct taskbox_buf page;

	/* A running task's logs still grow: never kept. */
	cached(&run, "running", 6, 0);
	tb_record_cache_keep_log(&run, TB_LOG_STDOUT,
	                         (const unsigned char *)"hello\n", 6);
	cr_assert_eq(
	    tb_record_cache_log_page(&run, TB_LOG_STDOUT, 0, 100, &page), 0);
	cr_assert_null(page.data);
	/* Finished: a whole log is kept; a partial read is not. */
	cached(&fin, "succeeded", 6, 3);
	tb_record_cache_keep_log(&fin, TB_LOG_STDERR,
	                         (const unsigned char *)"er", 2);
	cr_assert_eq(
	    tb_record_cache_log_page(&fin, TB_LOG_STDERR, 0, 100, &page), 0);
	tb_record_cache_keep_log(&fin, TB_LOG_STDOUT,
	                         (const unsigned char *)"hello\n", 6);
	cr_assert_eq(
	    tb_record_cache_log_page(&fin, TB_LOG_STDERR, 0, 100, &page), 0);
	/* Pages replay as the provider's would: offset, limit, the end. */
	page_is(&fin, TB_LOG_STDOUT, 0, 100, "hello\n");
	page_is(&fin, TB_LOG_STDOUT, 1, 3, "ell");
	page_is(&fin, TB_LOG_STDOUT, 6, 100, "");
	page_is(&fin, TB_LOG_STDOUT, 99, 100, "");
	/* The next read of the same bytes finds the log kept. */
	cached(&again, "succeeded", 6, 3);
	cr_assert_eq(again.json, fin.json);
	page_is(&again, TB_LOG_STDOUT, 2, 2, "ll");
	/* Other bytes (another record of the task) start with no log. */
	cached(&other, "succeeded", 7, 3);
	cr_assert_eq(
	    tb_record_cache_log_page(&other, TB_LOG_STDOUT, 0, 100, &page), 0);
	cr_assert_eq(
	    tb_record_cache_log_page(&fin, TB_LOG_STDOUT, 0, 100, &page), 0,
	    "a record the cache no longer holds has no log");
	/* Over TB_RECORD_LOG_MAX: not kept. */
	tb_task_record_clear(&other);
	cached(&other, "failed", TB_RECORD_LOG_MAX + 1, 0);
	{
		static unsigned char big[TB_RECORD_LOG_MAX + 1];

		tb_record_cache_keep_log(&other, TB_LOG_STDOUT, big,
		                         sizeof big);
	}
	cr_assert_eq(
	    tb_record_cache_log_page(&other, TB_LOG_STDOUT, 0, 100, &page), 0);
	tb_task_record_clear(&run);
	tb_task_record_clear(&fin);
	tb_task_record_clear(&again);
	tb_task_record_clear(&other);
	tb_record_cache_clear();
}

Test(sup_record, reads_error_objects)
{
	const char *t = "{\"error\":\"at most 128 tasks\",\"code\":\"limit\"}";
	char msg[64], code[16];

	cr_assert_eq(tb_sup_error_parse(t, strlen(t), msg, sizeof(msg), code,
	                                sizeof(code)),
	             0);
	cr_assert_str_eq(msg, "at most 128 tasks");
	cr_assert_str_eq(code, "limit");
	cr_assert_eq(tb_sup_error_parse(running, strlen(running), msg,
	                                sizeof(msg), code, sizeof(code)),
	             -1);
	cr_assert_eq(
	    tb_sup_error_parse("junk", 4, msg, sizeof(msg), code, sizeof(code)),
	    -1);
}

static const char *stat_tail = " S 1 4242 4242 0 -1 4194560 112 0 0 0 1 0 "
                               "0 0 20 0 1 0 987654 12345678 1000 "
                               "18446744073709551615 1 1 0 0 0 0 0\n";

static void expect_start(const char *comm, int ok, uint64_t want)
{
	char line[512];
	uint64_t got = 0;

	snprintf(line, sizeof(line), "4242 (%s)%s", comm, stat_tail);
	cr_assert_eq(tb_proc_stat_starttime(line, strlen(line), &got),
	             ok ? 0 : -1, "comm %s", comm);
	if (ok)
		cr_assert_eq(got, want, "comm %s", comm);
}

Test(proc_stat, reads_field_22_whatever_the_comm)
{
	expect_start("python3", 1, 987654);
	expect_start("my prog", 1, 987654);
	expect_start("a) (b", 1, 987654);
	expect_start(") 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 (",
	             1, 987654);
	expect_start("", 1, 987654);
}

Test(proc_stat, refuses_malformed_lines)
{
	uint64_t v;
	const char *bad[] = {"", "4242 python3 S 1", "4242 (x) S 1 2 3",
	                     "4242 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 "
	                     "16 17 18 x9"};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(tb_proc_stat_starttime(bad[i], strlen(bad[i]), &v),
		             -1, "%s", bad[i]);
}

Test(proc_stat, reads_this_process)
{
	char line[1024];
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;
	uint64_t v = 0;

	cr_assert_not_null(f);
	n = fread(line, 1, sizeof(line), f);
	fclose(f);
	cr_assert_eq(tb_proc_stat_starttime(line, n, &v), 0);
	cr_assert_gt(v, 0);
}

Test(proc_stat, live_only_when_start_matches_and_not_a_zombie)
{
	const char *run = "42 (a) b) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 "
	                  "20 0 1 0 777 0 0\n";
	const char *zombie = "42 (sh) Z 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 "
	                     "20 0 1 0 777 0 0\n";
	const char *dead = "42 (sh) X 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 "
	                   "20 0 1 0 777 0 0\n";

	cr_assert_eq(tb_proc_stat_is_live(run, strlen(run), 777), 1);
	cr_assert_eq(tb_proc_stat_is_live(run, strlen(run), 778), 0,
	             "a reused pid (another start time) is not the supervisor");
	cr_assert_eq(tb_proc_stat_is_live(zombie, strlen(zombie), 777), 0,
	             "a zombie with the right start time is dead");
	cr_assert_eq(tb_proc_stat_is_live(dead, strlen(dead), 777), 0);
	cr_assert_eq(tb_proc_stat_is_live("42 (sh", 6, 777), -1);
}

/* Whether the heartbeat text s is fresh at now_ms. */
static int fresh(const char *s, int64_t now_ms)
{
	return tb_heartbeat_fresh((const unsigned char *)s, strlen(s), now_ms);
}

Test(heartbeat, fresh_only_within_the_trusted_window_either_way)
{
	const int64_t now = 1764633600000;

	cr_assert_eq(fresh("1764633600000\n", now), 1);
	cr_assert_eq(fresh("1764633597000\n", now), 1, "3 s old is trusted");
	cr_assert_eq(fresh("1764633596999\n", now), 0, "older is not");
	cr_assert_eq(fresh("1764633603000\n", now), 1, "3 s ahead is trusted");
	cr_assert_eq(fresh("1764633603001\n", now), 0,
	             "a clock further ahead proves nothing");
}

Test(heartbeat, malformed_text_proves_nothing)
{
	const int64_t now = 1764633600000;

	cr_assert_eq(fresh("", now), 0);
	cr_assert_eq(fresh("\n", now), 0);
	cr_assert_eq(fresh("1764633600000", now), 0, "no newline: torn");
	cr_assert_eq(fresh("1764633600000\n\n", now), 0);
	cr_assert_eq(fresh(" 1764633600000\n", now), 0);
	cr_assert_eq(fresh("-1764633600000\n", now), 0);
	cr_assert_eq(fresh("17646336000x0\n", now), 0);
	cr_assert_eq(fresh("999999999999999999999999\n", now), 0,
	             "too long to be a clock (and no overflow)");
	cr_assert_eq(fresh("0001764633600000\n", now), 1,
	             "leading zeros are digits");
}

Test(sup_record, reads_the_input_and_ending_fields)
{
	const char *t = "{\"format\":1,\"task_id\":\"" ID "\","
	                "\"state\":\"failed\",\"exit_code\":137,"
	                "\"started_at\":5,\"finished_at\":9,\"stdin\":\"tty\","
	                "\"idempotency_key\":\"deploy-1.x\","
	                "\"signal\":\"SIGKILL\",\"ended_by\":\"exit\"}";
	struct tb_task_record r;
	char err[256];

	cr_assert_eq(
	    tb_task_record_parse(t, strlen(t), ID, &r, err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_str_eq(r.stdin_mode, "tty");
	cr_assert_str_eq(r.idempotency_key, "deploy-1.x");
	cr_assert_str_eq(r.signal, "SIGKILL");
	cr_assert_str_eq(r.ended_by, "exit");
	cr_assert_not(r.existing);
	tb_task_record_clear(&r);
	/* An older record has none of them. */
	cr_assert_eq(tb_task_record_parse(running, strlen(running), ID, &r, err,
	                                  sizeof(err)),
	             0, "%s", err);
	cr_assert_str_eq(r.stdin_mode, "null");
	cr_assert_null(r.idempotency_key);
	cr_assert_null(r.signal);
	cr_assert_null(r.ended_by);
	tb_task_record_clear(&r);
}

Test(sup_record, refuses_bad_input_and_ending_fields)
{
	static const char *const bad[] = {
	    "\"stdin\":\"socket\"",   "\"stdin\":1",
	    "\"ended_by\":\"oom\"",   "\"signal\":9",
	    "\"idempotency_key\":[]", "\"existing\":\"yes\""};
	char text[512], err[256];
	struct tb_task_record r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
		         "{\"format\":1,\"task_id\":\"" ID "\","
		         "\"state\":\"succeeded\",%s}",
		         bad[i]);
		cr_assert_eq(tb_task_record_parse(text, strlen(text), ID, &r,
		                                  err, sizeof(err)),
		             -1, "%s was accepted", bad[i]);
	}
}

Test(sup_record, a_keyed_start_may_answer_another_task)
{
	const char *t = "{\"format\":1,\"task_id\":\"" ID "\","
	                "\"state\":\"running\",\"supervisor_pid\":7,"
	                "\"supervisor_start\":8,\"existing\":true}";
	struct tb_task_record r;
	char err[256];

	cr_assert_eq(
	    tb_task_record_parse(t, strlen(t), NULL, &r, err, sizeof(err)), 0,
	    "%s", err);
	cr_assert(r.existing);
	cr_assert_str_eq(r.task_id, ID);
	tb_task_record_clear(&r);
}

Test(sup_record, ended_by_follows_the_first_cause)
{
	cr_assert_null(tb_task_ended_by(TB_TASK_RUNNING, "exit", false));
	cr_assert_str_eq(tb_task_ended_by(TB_TASK_TIMED_OUT, NULL, false),
	                 "timeout");
	cr_assert_str_eq(tb_task_ended_by(TB_TASK_CANCELLED, NULL, false),
	                 "cancel");
	cr_assert_str_eq(tb_task_ended_by(TB_TASK_FAILED, NULL, false), "exit");
	cr_assert_str_eq(tb_task_ended_by(TB_TASK_SUCCEEDED, "exit", false),
	                 "exit");
	cr_assert_str_eq(tb_task_ended_by(TB_TASK_UNKNOWN, NULL, true),
	                 "supervisor_lost");
	cr_assert_null(tb_task_ended_by(TB_TASK_UNKNOWN, NULL, false));
}
