/* tb_task_view against an in-memory provider: how many provider calls a
 * view makes, and what it trusts, with and without read_files batches;
 * and a view made of a wait verb's answer. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/registry.h"
#include "tasks/box.h"
#include "tasks/record_cache.h"
#include "tasks/sup_client.h"
#include "tasks/task_view.h"

#define TID "0123456789abcdef0123456789abcdef"
#define DIR ".taskbox/tasks/" TID "/"

/* The sandbox: a few files, and what the provider was asked. */
static struct {
	const char *path[8];
	const char *text[8];
	const char *batch_stdout; /* what a batch sees of stdout, if set */
	const char *batch_status; /* what a batch sees of the record, if set */
	const char *proc_stat;    /* what `cat /proc/...` prints, or NULL */
	int read_file, read_files, exec;
	size_t batch_items; /* in the last batch */
} sb;

static void put(const char *path, const char *text)
{
	int i;

	for (i = 0; i < 8 && sb.path[i] && strcmp(sb.path[i], path); i++)
		;
	cr_assert_lt(i, 8);
	sb.path[i] = path;
	sb.text[i] = text;
}

/* Moves a file to another path. */
static void rename_path(const char *from, const char *to)
{
	for (int i = 0; i < 8 && sb.path[i]; i++)
		if (strcmp(sb.path[i], from) == 0)
			sb.path[i] = to;
}

static const char *lookup(const char *path)
{
	for (int i = 0; i < 8 && sb.path[i]; i++)
		if (strcmp(sb.path[i], path) == 0)
			return sb.text[i];
	return NULL;
}

/* read_file's window over text. */
static int window(const char *text, uint64_t offset, size_t length,
                  struct taskbox_buf *data, uint64_t *file_size)
{
	size_t n = strlen(text);

	*file_size = n;
	data->data = NULL;
	data->len = 0;
	if (offset >= n || length == 0)
		return TASKBOX_OK;
	data->len = n - offset < length ? n - offset : length;
	data->data = malloc(data->len);
	memcpy(data->data, text + offset, data->len);
	return TASKBOX_OK;
}

static int fake_read_file(void *conn, const char *path, uint64_t offset,
                          size_t length, struct taskbox_buf *data,
                          uint64_t *file_size, char *errbuf, size_t errlen)
{
	const char *text = lookup(path);

	(void)conn;
	(void)errbuf;
	(void)errlen;
	sb.read_file++;
	if (text == NULL)
		return TASKBOX_E_NOT_FOUND;
	return window(text, offset, length, data, file_size);
}

static int fake_read_files(void *conn, struct taskbox_read_item *const *items,
                           size_t count, char *errbuf, size_t errlen)
{
	(void)conn;
	(void)errbuf;
	(void)errlen;
	sb.read_files++;
	sb.batch_items = count;
	for (size_t i = 0; i < count; i++) {
		struct taskbox_read_item *it = items[i];
		const char *text = lookup(it->path);

		if (sb.batch_stdout && strcmp(it->path, DIR "stdout") == 0)
			text = sb.batch_stdout;
		if (sb.batch_status && strcmp(it->path, DIR "status.json") == 0)
			text = sb.batch_status;
		it->status = text ? window(text, it->offset, it->length,
		                           &it->data, &it->file_size)
		                  : TASKBOX_E_NOT_FOUND;
	}
	return TASKBOX_OK;
}

/* exec: only `cat /proc/PID/stat` is expected. */
static int fake_exec(void *conn, const struct taskbox_exec_req *req,
                     struct taskbox_exec_result *res, char *errbuf,
                     size_t errlen)
{
	(void)conn;
	(void)errbuf;
	(void)errlen;
	sb.exec++;
	cr_assert_str_eq(req->argv[0], "cat");
	res->exit_code = sb.proc_stat ? 0 : 1;
	if (sb.proc_stat) {
		res->out.len = strlen(sb.proc_stat);
		res->out.data = malloc(res->out.len);
		memcpy(res->out.data, sb.proc_stat, res->out.len);
	}
	return TASKBOX_OK;
}

static struct taskbox_provider provider = {
    .name = "fake",
    .ops = {.read_file = fake_read_file, .exec = fake_exec},
    .read_files = fake_read_files,
};
static const struct tb_instance inst = {
    .name = "fake", .plugin = &provider, .handle = NULL};

static const char running[] =
    "{\"format\": 1, \"task_id\": \"" TID "\", \"state\": \"running\", "
    "\"command\": \"x\", \"started_at\": 1, \"supervisor_pid\": 42, "
    "\"supervisor_start\": 777}\n";
static const char finished[] =
    "{\"format\": 1, \"task_id\": \"" TID "\", \"state\": \"succeeded\", "
    "\"command\": \"x\", \"started_at\": 1, \"finished_at\": 2, "
    "\"exit_code\": 0, \"supervisor_pid\": 42, \"supervisor_start\": 777, "
    "\"stdout_bytes\": 6, \"stderr_bytes\": 0}\n";
static const char alive_stat[] =
    "42 (python3) S 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n";

/* A heartbeat `ms` from now, in a static buffer. */
static const char *beat(int64_t ms)
{
	static char text[32];
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(text, sizeof(text), "%lld\n",
	         (long long)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + ms));
	return text;
}

static void setup(void)
{
	memset(&sb, 0, sizeof(sb));
	tb_record_cache_clear();
	provider.read_files = fake_read_files;
	put(DIR "stdout", "hello\n");
}

/* Views the task; returns its state, with the view in *view. */
static const char *view(json_t **v)
{
	struct tb_box box = {.inst = &inst, .id = "fake:sb"};
	struct tb_page_req pr = {0, 0, 16384};

	cr_assert_eq(tb_task_view(&box, TID, &pr, NULL, v, NULL), 0);
	return json_string_value(json_object_get(*v, "state"));
}

TestSuite(task_view, .init = setup);

Test(task_view, a_fresh_heartbeat_makes_a_view_one_batch)
{
	json_t *v;

	put(DIR "status.json", running);
	put(DIR "heartbeat", beat(-500));
	cr_assert_str_eq(view(&v), "running");
	cr_assert_str_eq(json_string_value(json_object_get(v, "stdout")),
	                 "hello\n");
	cr_assert_eq(json_integer_value(json_object_get(v, "stdout_size")), 6);
	cr_assert_eq(sb.read_files, 1);
	cr_assert_eq(sb.read_file + sb.exec, 0,
	             "read_file %d, exec %d: nothing but the batch",
	             sb.read_file, sb.exec);
	json_decref(v);
}

Test(task_view, a_stale_missing_or_future_heartbeat_is_checked_in_proc)
{
	char stale[32], ahead[32];
	const char *beats[] = {stale, NULL, ahead, "12\n", "x"};
	json_t *v;

	snprintf(stale, sizeof(stale), "%s", beat(-3500));
	snprintf(ahead, sizeof(ahead), "%s", beat(+3500));
	put(DIR "status.json", running);
	sb.proc_stat = alive_stat;
	for (int i = 0; i < 5; i++) {
		sb.exec = sb.read_files = 0;
		/* A path nobody reads stands for no heartbeat. */
		put(DIR "heartbeat", beats[i] ? beats[i] : "");
		if (!beats[i])
			rename_path(DIR "heartbeat", DIR "elsewhere");
		cr_assert_str_eq(view(&v), "running");
		cr_assert_eq(sb.read_files, 1);
		cr_assert_eq(sb.exec, 1, "case %d: /proc read by exec", i);
		if (!beats[i])
			rename_path(DIR "elsewhere", DIR "heartbeat");
		json_decref(v);
	}
}

Test(task_view,
     an_ended_task_with_a_page_read_before_its_last_bytes_is_read_again)
{
	json_t *v;

	put(DIR "status.json", finished);
	sb.batch_stdout = "hel"; /* the batch read stdout before the end */
	cr_assert_str_eq(view(&v), "succeeded");
	cr_assert_str_eq(json_string_value(json_object_get(v, "stdout")),
	                 "hello\n");
	cr_assert_eq(sb.read_files, 1);
	cr_assert_eq(sb.read_file, 1, "stdout read again, alone");
	json_decref(v);
}

Test(task_view, an_ended_task_with_a_whole_page_needs_nothing_more)
{
	json_t *v;

	put(DIR "status.json", finished);
	cr_assert_str_eq(view(&v), "succeeded");
	cr_assert_str_eq(json_string_value(json_object_get(v, "stdout")),
	                 "hello\n");
	cr_assert_eq(sb.read_files + sb.read_file + sb.exec, 1);
	cr_assert_eq(sb.batch_items, 4, "record, two pages, heartbeat");
	json_decref(v);
	/* Its logs are kept now: the next view reads the record alone. */
	cr_assert_str_eq(view(&v), "succeeded");
	cr_assert_str_eq(json_string_value(json_object_get(v, "stdout")),
	                 "hello\n");
	cr_assert_eq(sb.read_files + sb.read_file + sb.exec, 2);
	cr_assert_eq(sb.batch_items, 1, "the record only");
	json_decref(v);
}

Test(task_view, without_batches_a_view_reads_no_heartbeat)
{
	json_t *v;

	provider.read_files = NULL;
	put(DIR "status.json", running);
	put(DIR "heartbeat", beat(0));
	sb.proc_stat = alive_stat;
	cr_assert_str_eq(view(&v), "running");
	/* status.json, /proc/42/stat (missing here: then exec), stdout,
	 * stderr: the heartbeat is not read. */
	cr_assert_eq(sb.read_files, 0);
	cr_assert_eq(sb.read_file, 4);
	cr_assert_eq(sb.exec, 1);
	json_decref(v);
}

Test(task_view, a_record_cut_by_a_rename_during_the_batch_is_read_again)
{
	char cut[64];
	json_t *v;

	/* The old record's size, the new record's bytes. */
	snprintf(cut, sizeof(cut), "%.40s", finished);
	put(DIR "status.json", finished);
	sb.batch_status = cut;
	cr_assert_str_eq(view(&v), "succeeded");
	cr_assert_eq(sb.read_files, 1);
	cr_assert_eq(sb.read_file, 1, "the record read again, alone");
	json_decref(v);
}

/* A wait verb's answer: REC (a record's text, without its closing brace)
 * with pages of stdout and stderr, parsed. */
static void answer(struct tb_task_record *rec, const char *record,
                   const char *pages)
{
	char text[1024], err[256];

	snprintf(text, sizeof text, "%.*s, %s}",
	         (int)(strrchr(record, '}') - record), record, pages);
	cr_assert_eq(
	    tb_task_record_parse(text, strlen(text), TID, rec, err, sizeof err),
	    0, "%s", err);
}

static const char hello_pages[] =
    "\"stdout_page\": {\"offset\": 0, \"size\": 6, \"data\": \"aGVsbG8K\"}, "
    "\"stderr_page\": {\"offset\": 0, \"size\": 0, \"data\": \"\"}";

Test(task_view, a_wait_answer_is_the_view_without_a_read)
{
	const char *records[] = {running, finished};
	struct tb_sup_wait_req req = {.page_limit = 16384};
	struct tb_box box = {.inst = &inst, .id = "fake:sb"};
	struct tb_page_req pr = {0, 0, 16384};
	struct taskbox_read_item page[2];
	struct tb_task_record rec;
	struct tb_task_sup sup;
	json_t *given, *read;

	for (int i = 0; i < 2; i++) {
		put(DIR "status.json", records[i]);
		put(DIR "heartbeat", beat(0));
		answer(&rec, records[i], hello_pages);
		cr_assert_eq(tb_sup_wait_pages(&rec, &req, page), 0);
		sb.read_file = sb.read_files = sb.exec = 0;
		cr_assert_eq(tb_task_view_given(&box, TID, &pr, NULL, &rec,
		                                page, &given, &sup),
		             0);
		cr_assert_eq(sb.read_file + sb.read_files + sb.exec, 0,
		             "case %d: read_file %d, read_files %d, exec %d", i,
		             sb.read_file, sb.read_files, sb.exec);
		cr_assert_eq(sup.pid, i == 0 ? 42 : 0);
		/* The same view as one read from the sandbox. */
		cr_assert_str_eq(view(&read), i == 0 ? "running" : "succeeded");
		cr_assert(json_equal(given, read), "case %d", i);
		json_decref(given);
		json_decref(read);
		tb_task_record_clear(&rec);
	}
}

Test(task_view, a_wait_answer_without_usable_pages_gives_none)
{
	const char *bad[] = {
	    /* no pages */
	    "\"other\": 1",
	    /* another offset than asked */
	    "\"stdout_page\": {\"offset\": 1, \"size\": 6, \"data\": \"\"}, "
	    "\"stderr_page\": {\"offset\": 0, \"size\": 0, \"data\": \"\"}",
	    /* not base64 */
	    "\"stdout_page\": {\"offset\": 0, \"size\": 6, \"data\": "
	    "\"aGV*\"}, "
	    "\"stderr_page\": {\"offset\": 0, \"size\": 0, \"data\": \"\"}",
	    /* more bytes than the size counts */
	    "\"stdout_page\": {\"offset\": 0, \"size\": 2, \"data\": "
	    "\"aGVsbG8K\"}, "
	    "\"stderr_page\": {\"offset\": 0, \"size\": 0, \"data\": \"\"}",
	    /* more bytes than the limit (4 below) */
	    hello_pages,
	    /* stderr's page missing */
	    "\"stdout_page\": {\"offset\": 0, \"size\": 6, \"data\": "
	    "\"aGVsbG8K\"}",
	};
	struct tb_sup_wait_req req = {.page_limit = 16384};
	struct taskbox_read_item page[2];
	struct tb_task_record rec;

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		answer(&rec, running, bad[i]);
		req.page_limit = i == 4 ? 4 : 16384;
		cr_assert_eq(tb_sup_wait_pages(&rec, &req, page), -1,
		             "case %zu", i);
		tb_task_record_clear(&rec);
	}
	/* Nothing asked, nothing taken. */
	req.page_limit = 0;
	answer(&rec, running, hello_pages);
	cr_assert_eq(tb_sup_wait_pages(&rec, &req, page), -1);
	tb_task_record_clear(&rec);
}
