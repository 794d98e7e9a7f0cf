/* read_file and write_file on the local provider: offsets, lengths, EOF,
 * missing files, procfs files whose size reads as 0, kept descriptors,
 * modes, parents. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper.h"

static void *inst, *conn;
static char id[TASKBOX_SANDBOX_ID_MAX];

static void setup(void)
{
	tl_setup();
	inst = tl_init_ok();
	tl_create(inst, 0, id);
	conn = tl_connect(inst, id);
}

static void teardown(void)
{
	tl_p->ops.close(conn);
	tl_p->ops.fini(inst);
	tl_teardown();
}

TestSuite(local_files, .init = setup, .fini = teardown, .timeout = 60);

static int rd(const char *path, uint64_t off, size_t len,
              struct taskbox_buf *data, uint64_t *size)
{
	*size = 12345;
	return tl_p->ops.read_file(conn, path, off, len, data, size, tl_err,
	                           sizeof tl_err);
}

static void wr(const char *path, const char *text, uint32_t mode)
{
	int rc =
	    tl_p->ops.write_file(conn, path, (const unsigned char *)text,
	                         strlen(text), mode, tl_err, sizeof tl_err);

	cr_assert_eq(rc, TASKBOX_OK, "write %s: %d %s", path, rc, tl_err);
}

#define DATA_IS(d, text)                                                       \
	cr_assert((d).len == strlen(text) &&                                   \
	              (!(d).len || !memcmp((d).data, text, strlen(text))),     \
	          "read '%.*s', wanted '%s'", (int)(d).len, (char *)(d).data,  \
	          text)

Test(local_files, offsets_lengths_and_eof)
{
	struct taskbox_buf d;
	uint64_t size;

	wr("digits", "0123456789", 0644);
	cr_assert_eq(rd("digits", 0, 100, &d, &size), TASKBOX_OK);
	DATA_IS(d, "0123456789");
	cr_assert_eq(size, 10);
	free(d.data);
	cr_assert_eq(rd("digits", 3, 4, &d, &size), TASKBOX_OK);
	DATA_IS(d, "3456");
	free(d.data);
	cr_assert_eq(rd("digits", 8, 4, &d, &size), TASKBOX_OK);
	DATA_IS(d, "89");
	free(d.data);
	for (uint64_t off = 10; off <= 1000; off += 990) {
		cr_assert_eq(rd("digits", off, 4, &d, &size), TASKBOX_OK);
		cr_assert_null(d.data);
		cr_assert_eq(d.len, 0);
		cr_assert_eq(size, 10);
	}
	cr_assert_eq(rd("digits", 0, 0, &d, &size), TASKBOX_OK);
	cr_assert_eq(d.len, 0);
	cr_assert_eq(size, 10);
}

Test(local_files, missing_and_wrong_kinds)
{
	struct taskbox_buf d;
	uint64_t size;

	cr_assert_eq(rd("nope", 0, 10, &d, &size), TASKBOX_E_NOT_FOUND);
	cr_assert(strstr(tl_err, "nope"), "%s", tl_err);
	cr_assert_eq(rd("no/such/dir/file", 0, 10, &d, &size),
	             TASKBOX_E_NOT_FOUND);
	cr_assert_eq(rd(".", 0, 10, &d, &size), TASKBOX_E_INVALID);
	cr_assert_eq(rd("", 0, 10, &d, &size), TASKBOX_E_INVALID);
}

Test(local_files, procfs_files_report_their_real_size)
{
	struct taskbox_buf d, part;
	uint64_t size, psize;
	char head[32];
	int n;

	cr_assert_eq(rd("/proc/self/cmdline", 0, 1 << 20, &d, &size),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_gt(d.len, 0);
	cr_assert_eq(size, d.len);
	cr_assert_eq(rd("/proc/self/cmdline", 2, 3, &part, &psize), TASKBOX_OK);
	cr_assert_eq(part.len, 3);
	cr_assert_eq(psize, size);
	cr_assert_eq(memcmp(part.data, d.data + 2, 3), 0);
	free(part.data);
	free(d.data);

	n = snprintf(head, sizeof head, "%ld (", (long)getpid());
	cr_assert_eq(rd("/proc/self/stat", 0, 4096, &d, &size), TASKBOX_OK);
	cr_assert_geq(d.len, (size_t)n);
	cr_assert_eq(memcmp(d.data, head, (size_t)n), 0);
	cr_assert_eq(size, d.len);
	free(d.data);
}

/* The host path of name in the sandbox's home. */
static void home_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s/home/%s", tl_root, id, name);
}

/* Rewrites (mode "w": same file, truncated) or appends to name in place. */
static void edit(const char *name, const char *mode, const char *text)
{
	char path[600];
	FILE *f;

	home_path(path, sizeof path, name);
	f = fopen(path, mode);
	cr_assert_not_null(f);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* Asserts that name reads as text (whole) with size strlen(text). */
static void reads_as(const char *name, const char *text)
{
	struct taskbox_buf d;
	uint64_t size;

	cr_assert_eq(rd(name, 0, 100, &d, &size), TASKBOX_OK, "%s", tl_err);
	DATA_IS(d, text);
	cr_assert_eq(size, strlen(text));
	free(d.data);
}

/* A connection keeps the descriptors of files it read (kept.c); a kept
 * one must read exactly like a newly opened one whatever happened to the
 * file, and their number stays bounded. */
Test(local_files, kept_descriptors_read_like_fresh_ones)
{
	char path[600], name[16];
	struct taskbox_buf d;
	uint64_t size;
	int fds;

	wr("log", "abc", 0600);
	reads_as("log", "abc");
	edit("log", "a", "def"); /* appended */
	reads_as("log", "abcdef");
	edit("log", "w", "x"); /* truncated and rewritten in place */
	reads_as("log", "x");
	wr("log", "replaced", 0600); /* a new file renamed over it */
	reads_as("log", "replaced");
	edit("log", "w", ""); /* empty */
	cr_assert_eq(rd("log", 0, 100, &d, &size), TASKBOX_OK, "%s", tl_err);
	cr_assert_null(d.data);
	cr_assert_eq(size, 0);
	home_path(path, sizeof path, "log");
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(rd("log", 0, 100, &d, &size), TASKBOX_E_NOT_FOUND);
	/* A procfs file through a link in the sandbox: size 0 there does
	 * not mean empty, and it reads in full every time. */
	home_path(path, sizeof path, "stat");
	cr_assert_eq(symlink("/proc/self/stat", path), 0);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(rd("stat", 0, 4096, &d, &size), TASKBOX_OK);
		cr_assert_gt(d.len, 0);
		cr_assert_eq(size, d.len);
		free(d.data);
	}
	/* Many files read twice: at most 48 descriptors kept. */
	fds = tl_open_fds();
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 60; i++) {
			snprintf(name, sizeof name, "f%d", i);
			if (round == 0)
				wr(name, name, 0600);
			reads_as(name, name);
		}
	cr_assert_leq(tl_open_fds(), fds + 48);
}

/* Writes and reads back n files named prefix0, prefix1, ... through
 * connection c. */
static void fill_through(void *c, const char *prefix, int n)
{
	char name[16];

	for (int i = 0; i < n; i++) {
		struct taskbox_buf d;
		uint64_t size;

		snprintf(name, sizeof name, "%s%d", prefix, i);
		cr_assert_eq(tl_p->ops.write_file(
		                 c, name, (const unsigned char *)name,
		                 strlen(name), 0600, tl_err, sizeof tl_err),
		             TASKBOX_OK, "%s", tl_err);
		cr_assert_eq(tl_p->ops.read_file(c, name, 0, 100, &d, &size,
		                                 tl_err, sizeof tl_err),
		             TASKBOX_OK, "%s", tl_err);
		cr_assert_eq(d.len, strlen(name));
		free(d.data);
	}
}

/* All connections of an instance keep at most 256 descriptors, idle ones
 * included. */
Test(local_files, kept_descriptors_are_bounded_per_instance)
{
	char ids[7][TASKBOX_SANDBOX_ID_MAX];
	void *c;
	int fds = tl_open_fds();

	for (int s = 0; s < 7; s++) {
		tl_create(inst, 0, ids[s]);
		c = tl_connect(inst, ids[s]);
		fill_through(c, "f", 48);
		tl_p->ops.close(c); /* idle, with what it keeps */
	}
	/* 7 x 48 = 336 files read; each connection also holds 2 directories. */
	cr_assert_leq(tl_open_fds(), fds + 256 + 7 * 2);
}

/* Where the process may open few files, an instance keeps a quarter of
 * its limit at most. */
Test(local_files, kept_descriptors_leave_room_under_a_low_file_limit)
{
	struct rlimit rl = {0};
	char id2[TASKBOX_SANDBOX_ID_MAX];
	void *inst2, *c;
	int fds;

	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = 120; /* a cap of 30 */
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	inst2 = tl_init_ok();
	tl_create(inst2, 0, id2);
	c = tl_connect(inst2, id2);
	fds = tl_open_fds();
	fill_through(c, "g", 48);
	cr_assert_leq(tl_open_fds(), fds + 30);
	tl_p->ops.close(c);
	tl_p->ops.fini(inst2);
}

Test(local_files, four_kib_and_absolute_paths)
{
	char big[4097], path[600];
	struct taskbox_buf d;
	uint64_t size;

	memset(big, 'k', 4096);
	big[4096] = '\0';
	wr("big", big, 0600);
	cr_assert_eq(rd("big", 0, 4096, &d, &size), TASKBOX_OK);
	cr_assert_eq(d.len, 4096);
	free(d.data);
	snprintf(path, sizeof path, "%s/%s/home/big", tl_root, id);
	cr_assert_eq(rd(path, 4000, 4096, &d, &size), TASKBOX_OK);
	cr_assert_eq(d.len, 96);
	free(d.data);
}

Test(local_files, write_makes_parents_honours_mode_and_replaces)
{
	char path[600];
	struct stat st;
	struct taskbox_buf d;
	uint64_t size;

	wr("a/b/c.txt", "first", 0640);
	snprintf(path, sizeof path, "%s/%s/home/a/b/c.txt", tl_root, id);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640);
	wr("a/b/c.txt", "second", 0755);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755);
	cr_assert_eq(rd("a/b/c.txt", 0, 100, &d, &size), TASKBOX_OK);
	DATA_IS(d, "second");
	free(d.data);
	wr("empty", "", 0600);
	cr_assert_eq(rd("empty", 0, 100, &d, &size), TASKBOX_OK);
	cr_assert_eq(d.len, 0);
	cr_assert_eq(size, 0);

	/* No temp file is left behind. */
	struct taskbox_exec_result res;
	tl_sh(conn, &res, "ls -A a/b");
	cr_assert_eq(res.out.len, 6, "%.*s", (int)res.out.len,
	             (char *)res.out.data);
	tl_res_free(&res);

	cr_assert_eq(tl_p->ops.write_file(conn, "x", (const unsigned char *)"",
	                                  0, 010000, tl_err, sizeof tl_err),
	             TASKBOX_E_INVALID);
	cr_assert_eq(tl_p->ops.write_file(conn, "dir/",
	                                  (const unsigned char *)"", 0, 0644,
	                                  tl_err, sizeof tl_err),
	             TASKBOX_E_INVALID);
	cr_assert_eq(tl_p->ops.write_file(conn, "a/b",
	                                  (const unsigned char *)"", 0, 0644,
	                                  tl_err, sizeof tl_err),
	             TASKBOX_E_INVALID, "%s", tl_err);
}
