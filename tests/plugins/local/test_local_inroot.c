/* Under bubblewrap, read_file resolves every path of the sandbox inside
 * the sandbox's directory: links a command made to host files or
 * directories, and ".." climbing, never reach the host; links within the
 * sandbox (relative, or absolute through /tmp) still work. Each case runs
 * through openat2 and through the walk that stands in for it where openat2
 * is missing (TASKBOX_LOCAL_TEST_NO_OPENAT2; valgrind has no openat2). */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper.h"

TestSuite(local_inroot, .init = tl_setup, .fini = tl_teardown, .timeout = 60);

struct box {
	void *inst, *conn;
	char id[TASKBOX_SANDBOX_ID_MAX];
	char host_file[300], host_dir[300];
};

/* A bwrap sandbox (or a skipped test), with a host file and a host
 * directory holding "secret" outside it, and links to them in its home
 * made by a command. */
static void setup_box(struct box *b, int walk)
{
	struct taskbox_exec_result res;
	char script[2048];
	FILE *f;
	int rc;

	if (walk)
		setenv("TASKBOX_LOCAL_TEST_NO_OPENAT2", "1", 1);
	if (access("/usr/bin/bwrap", X_OK) != 0 &&
	    access("/bin/bwrap", X_OK) != 0)
		cr_skip_test("bubblewrap is not installed");
	rc = tl_init("{\"root\":\"%s\",\"isolation\":\"bwrap\"}", &b->inst);
	if (rc == TASKBOX_E_UNAVAILABLE)
		cr_skip_test("bubblewrap cannot run here: %s", tl_err);
	cr_assert_eq(rc, TASKBOX_OK, "%s", tl_err);
	snprintf(b->host_file, sizeof b->host_file, "%s/host-file", tl_root);
	snprintf(b->host_dir, sizeof b->host_dir, "%s/host-dir", tl_root);
	cr_assert_not_null(f = fopen(b->host_file, "w"));
	fputs("secret", f);
	fclose(f);
	cr_assert_eq(mkdir(b->host_dir, 0755), 0);
	snprintf(script, sizeof script, "%s/secret", b->host_dir);
	cr_assert_not_null(f = fopen(script, "w"));
	fputs("secret", f);
	fclose(f);
	tl_create(b->inst, 0, b->id);
	b->conn = tl_connect(b->inst, b->id);
	snprintf(script, sizeof script,
	         "set -e; ln -s %s to-file; ln -s %s to-dir; "
	         "ln -s /etc/hostname to-etc; ln -s /etc to-etc-dir; "
	         "mkdir -p sub; echo inside > sub/f; ln -s sub/f rel; "
	         "echo tmpdata > /tmp/data; ln -s /tmp/data abs-tmp; "
	         "ln -s ../tmp/data up-tmp; ln -s loop loop; "
	         "ln -s /tmp sub/tmp-dir",
	         b->host_file, b->host_dir);
	tl_sh(b->conn, &res, script);
	cr_assert_eq(res.exit_code, 0, "%.*s", (int)res.err.len,
	             (char *)res.err.data);
	tl_res_free(&res);
}

static void teardown_box(struct box *b)
{
	tl_p->ops.close(b->conn);
	tl_p->ops.fini(b->inst);
}

/* read_file of path: its status, and the bytes in out (NUL-terminated). */
static int read_path(struct box *b, const char *path, char *out, size_t cap)
{
	struct taskbox_buf data = {0};
	uint64_t size;
	int rc = tl_p->ops.read_file(b->conn, path, 0, cap - 1, &data, &size,
	                             tl_err, sizeof tl_err);

	out[0] = '\0';
	if (rc == TASKBOX_OK) {
		memcpy(out, data.data, data.len);
		out[data.len] = '\0';
		free(data.data);
	}
	return rc;
}

static void expect_refused(struct box *b, const char *path)
{
	char out[256];
	int rc = read_path(b, path, out, sizeof out);

	cr_assert_neq(rc, TASKBOX_OK, "%s read the host: '%s'", path, out);
	cr_assert_null(strstr(out, "secret"), "%s", path);
}

static void expect_content(struct box *b, const char *path, const char *want)
{
	char out[256];
	int rc = read_path(b, path, out, sizeof out);

	cr_assert_eq(rc, TASKBOX_OK, "%s: %s", path, tl_err);
	cr_assert_str_eq(out, want, "%s", path);
}

static void links_stay_inside(int walk)
{
	struct box b;
	char path[600];
	char host_name[256] = "";
	FILE *f = fopen("/etc/hostname", "r");

	if (f) {
		if (!fgets(host_name, sizeof host_name, f))
			host_name[0] = '\0';
		fclose(f);
	}
	setup_box(&b, walk);
	/* Links to a host file, to a host directory mid-path, ".." out. */
	expect_refused(&b, "to-file");
	expect_refused(&b, "to-dir/secret");
	expect_refused(&b, "sub/../to-dir/secret");
	expect_refused(&b, "../../../../../../../../etc/hostname");
	expect_refused(&b, "/tmp/../../../../etc/hostname");
	snprintf(path, sizeof path, "%s/%s/home/to-dir/secret", tl_root, b.id);
	expect_refused(&b, path);
	snprintf(path, sizeof path, "%s/%s/../host-file", tl_root, b.id);
	expect_refused(&b, path);
	if (host_name[0]) {
		char out[256];
		int rc = read_path(&b, "to-etc", out, sizeof out);
		cr_assert(rc != TASKBOX_OK || strcmp(out, host_name),
		          "to-etc read the host's /etc/hostname");
		rc = read_path(&b, "to-etc-dir/hostname", out, sizeof out);
		cr_assert(rc != TASKBOX_OK || strcmp(out, host_name),
		          "to-etc-dir/hostname read the host's file");
	}
	/* A loop is refused, not followed forever. */
	cr_assert_eq(read_path(&b, "loop", path, 64), TASKBOX_E_INVALID, "%s",
	             tl_err);
	/* Links within the sandbox work, absolute ones through /tmp. */
	expect_content(&b, "rel", "inside\n");
	expect_content(&b, "abs-tmp", "tmpdata\n");
	expect_content(&b, "up-tmp", "tmpdata\n");
	expect_content(&b, "sub/tmp-dir/data", "tmpdata\n");
	expect_content(&b, "/tmp/data", "tmpdata\n");
	snprintf(path, sizeof path, "%s/%s/home/abs-tmp", tl_root, b.id);
	expect_content(&b, path, "tmpdata\n");
	snprintf(path, sizeof path, "%s/%s/home/sub/../rel", tl_root, b.id);
	expect_content(&b, path, "inside\n");
	teardown_box(&b);
}

Test(local_inroot, links_stay_inside_with_openat2)
{
	links_stay_inside(0);
}

Test(local_inroot, links_stay_inside_with_the_walk)
{
	links_stay_inside(1);
}

/* A file kept open from an earlier read is not served once the path
 * became a link out of the sandbox. */
Test(local_inroot, kept_file_replaced_by_a_link)
{
	struct box b;
	struct taskbox_exec_result res;
	char script[600];

	setup_box(&b, 0);
	expect_content(&b, "sub/f", "inside\n");
	snprintf(script, sizeof script, "rm sub/f && ln -s %s sub/f",
	         b.host_file);
	tl_sh(b.conn, &res, script);
	tl_res_free(&res);
	expect_refused(&b, "sub/f");
	teardown_box(&b);
}

/* write_file under bubblewrap resolves the directories on the way as the
 * commands do: through a link inside the sandbox it writes there; through
 * a link to a host directory it never writes on the host. */
static void writes_stay_inside(int walk)
{
	struct box b;
	struct stat st;
	char path[600];
	int rc;

	setup_box(&b, walk);
	rc = tl_p->ops.write_file(b.conn, "sub/tmp-dir/written",
	                          (const unsigned char *)"w1", 2, 0644, tl_err,
	                          sizeof tl_err);
	cr_assert_eq(rc, TASKBOX_OK, "%s", tl_err);
	expect_content(&b, "/tmp/written", "w1");
	rc = tl_p->ops.write_file(b.conn, "to-dir/planted",
	                          (const unsigned char *)"w2", 2, 0644, tl_err,
	                          sizeof tl_err);
	snprintf(path, sizeof path, "%s/planted", b.host_dir);
	cr_assert_neq(stat(path, &st), 0, "write_file wrote on the host (%d)",
	              rc);
	/* New directories are made inside, with no link followed. */
	rc = tl_p->ops.write_file(b.conn, "new/dir/f",
	                          (const unsigned char *)"w3", 2, 0644, tl_err,
	                          sizeof tl_err);
	cr_assert_eq(rc, TASKBOX_OK, "%s", tl_err);
	expect_content(&b, "new/dir/f", "w3");
	teardown_box(&b);
}

Test(local_inroot, writes_stay_inside_with_openat2)
{
	writes_stay_inside(0);
}

Test(local_inroot, writes_stay_inside_with_the_walk)
{
	writes_stay_inside(1);
}
