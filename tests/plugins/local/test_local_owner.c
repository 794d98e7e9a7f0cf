/* The local provider's ownership (ABI 1.5): create records the owner in
 * <root>/.owner-<id>, describe and list read it back (from any instance on
 * the root), owners that break the header's rule are refused, and under
 * bubblewrap the sandbox's own commands cannot change the record. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"

TestSuite(local_owner, .init = tl_setup, .fini = tl_teardown, .timeout = 120);

#define ALICE "alice@example.com"

/* What a list saw. */
struct seen {
	int n;
	int stop_after; /* each returns nonzero at the n-th call; 0: never */
	char ids[16][TASKBOX_SANDBOX_ID_MAX];
	char owners[16][TASKBOX_OWNER_MAX];
	int64_t created[16];
	int64_t expires[16];
};

static int collect(void *arg, const struct taskbox_sandbox_info *info)
{
	struct seen *s = arg;

	cr_assert_eq(info->struct_size, sizeof(*info));
	cr_assert_lt(s->n, 16);
	snprintf(s->ids[s->n], sizeof s->ids[0], "%s", info->id);
	snprintf(s->owners[s->n], sizeof s->owners[0], "%s", info->owner);
	s->created[s->n] = info->created_s;
	s->expires[s->n] = info->expires_s;
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

/* Lists inst (for owner, NULL: all) into s, asserting success. */
static void list(void *inst, const char *owner, struct seen *s)
{
	int stop = s->stop_after;
	int rc;

	memset(s, 0, sizeof(*s));
	s->stop_after = stop;
	rc = tl_p->list(inst, owner, collect, s, tl_err, sizeof tl_err);
	cr_assert_eq(rc, TASKBOX_OK, "list: %d %s", rc, tl_err);
}

/* The index of id in s, or -1. */
static int seen_at(const struct seen *s, const char *id)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->ids[i], id))
			return i;
	return -1;
}

/* describe on a connection to id, asserting success. */
static void describe(void *inst, const char *id,
                     struct taskbox_sandbox_info *info)
{
	void *conn = tl_connect(inst, id);
	int rc;

	memset(info, 0, sizeof(*info));
	info->struct_size = sizeof(*info);
	rc = tl_p->describe(conn, info, tl_err, sizeof tl_err);
	cr_assert_eq(rc, TASKBOX_OK, "describe: %d %s", rc, tl_err);
	tl_p->ops.close(conn);
}

/* create with owner, returning the op's status (id[0] is '\0' on failure). */
static int create(void *inst, const char *owner, char *id)
{
	struct taskbox_create_req req = {sizeof req, NULL, 0, owner};

	tl_err[0] = '\0';
	return tl_p->ops.create(inst, &req, id, tl_err, sizeof tl_err);
}

/* The number of entries in the root (sandboxes and records). */
static int root_entries(void)
{
	char cmd[400];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", tl_root);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	cr_assert_eq(fscanf(f, "%d", &n), 1);
	pclose(f);
	return n;
}

/* The owner record's bytes as the host reads them ("" when missing). */
static void record_text(const char *id, char *out, size_t cap)
{
	char path[512];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof path, "%s/.owner-%s", tl_root, id);
	out[0] = '\0';
	if (!(f = fopen(path, "r")))
		return;
	n = fread(out, 1, cap - 1, f);
	out[n] = '\0';
	fclose(f);
}

Test(local_owner, descriptor_offers_describe_and_list)
{
	cr_assert_eq(tl_p->abi_minor, TASKBOX_ABI_MINOR);
	cr_assert_geq(tl_p->struct_size, sizeof(struct taskbox_provider));
	cr_assert_not_null(tl_p->describe);
	cr_assert_not_null(tl_p->list);
}

Test(local_owner, describe_returns_the_recorded_owner_and_times)
{
	void *inst = tl_init_ok(), *other = tl_init_ok(), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], none[TASKBOX_SANDBOX_ID_MAX];
	char path[512], text[600];
	struct taskbox_sandbox_info info;
	struct stat st;
	int64_t now = time(NULL);

	tl_create_owned(inst, 600, ALICE, id);
	tl_create_owned(inst, 600, NULL, none);

	/* Another instance on the root (another server process) reads the
	 * same answer. */
	describe(other, id, &info);
	cr_assert_str_eq(info.id, id);
	cr_assert_str_eq(info.owner, ALICE);
	cr_assert(info.created_s >= now - 5 && info.created_s <= now + 5,
	          "created_s %lld, now %lld", (long long)info.created_s,
	          (long long)now);
	cr_assert(info.expires_s >= info.created_s + 599 &&
	              info.expires_s <= info.created_s + 601,
	          "expires_s %lld, created_s %lld", (long long)info.expires_s,
	          (long long)info.created_s);
	describe(inst, none, &info);
	cr_assert_str_eq(info.owner, "");
	cr_assert_gt(info.created_s, 0);

	/* The record sits in the root, beside the sandbox, not in it. */
	snprintf(path, sizeof path, "%s/.owner-%s", tl_root, id);
	cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_assert(S_ISREG(st.st_mode));
	record_text(id, text, sizeof text);
	cr_assert(strstr(text, "\"owner\":\"" ALICE "\""), "%s", text);

	/* renew moves expires_s, on this connection and on a new one. */
	conn = tl_connect(inst, id);
	cr_assert_eq(tl_p->ops.renew(conn, 1200, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	memset(&info, 0, sizeof info);
	info.struct_size = sizeof info;
	cr_assert_eq(tl_p->describe(conn, &info, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	now = time(NULL);
	cr_assert(info.expires_s >= now + 1195 && info.expires_s <= now + 1200,
	          "expires_s %lld, now %lld", (long long)info.expires_s,
	          (long long)now);
	cr_assert_str_eq(info.owner, ALICE);
	tl_p->ops.close(conn);
	describe(other, id, &info);
	cr_assert(info.expires_s >= now + 1195, "%lld",
	          (long long)info.expires_s);
	cr_assert_str_eq(info.owner, ALICE);

	/* A host whose info ends before owner gets only what fits. */
	conn = tl_connect(other, id);
	memset(&info, 0, sizeof info);
	strcpy(info.owner, "untouched");
	info.struct_size = offsetof(struct taskbox_sandbox_info, owner);
	cr_assert_eq(tl_p->describe(conn, &info, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	cr_assert_str_eq(info.id, id);
	cr_assert_str_eq(info.owner, "untouched");
	cr_assert_eq(info.created_s, 0);
	tl_p->ops.close(conn);

	/* Destroyed under an open connection: describe says GONE. */
	conn = tl_connect(other, id);
	cr_assert_eq(tl_p->ops.destroy(inst, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	memset(&info, 0, sizeof info);
	info.struct_size = sizeof info;
	cr_assert_eq(tl_p->describe(conn, &info, tl_err, sizeof tl_err),
	             TASKBOX_E_GONE, "%s", tl_err);
	tl_p->ops.close(conn);
	cr_assert_not(tl_exists(path), "destroy left %s", path);
	tl_p->ops.fini(other);
	tl_p->ops.fini(inst);
}

/* A host built for ABI 1.4 passes a create_req that ends before owner:
 * the plugin reads no owner from past its struct_size. */
Test(local_owner, owner_past_struct_size_is_not_read)
{
	void *inst = tl_init_ok();
	char id[TASKBOX_SANDBOX_ID_MAX];
	struct taskbox_sandbox_info info;
	struct taskbox_create_req req = {
	    offsetof(struct taskbox_create_req, owner), NULL, 0,
	    "mallory\n" /* would be refused if it were read */};

	cr_assert_eq(tl_p->ops.create(inst, &req, id, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	describe(inst, id, &info);
	cr_assert_str_eq(info.owner, "");
	tl_p->ops.fini(inst);
}

Test(local_owner, owners_that_break_the_rule_are_refused)
{
	void *inst = tl_init_ok();
	char id[TASKBOX_SANDBOX_ID_MAX], long_owner[300];
	struct taskbox_sandbox_info info;
	const char *bad[] = {"alice\n@example.com", "tab\there", "del\x7f",
	                     "nel\xc2\x85",         "\xff\xfe",  "esc\x1b[0m"};
	const char *good[] = {"bob smith / ops:admin@example.com",
	                      "Jos\xc3\xa9 \xc3\x91o\xc3\xb1o",
	                      "\"quoted\" back\\slash"};

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		id[0] = 'x';
		cr_assert_eq(create(inst, bad[i], id), TASKBOX_E_INVALID,
		             "owner %zu: %s", i, tl_err);
		cr_assert(strstr(tl_err, "owner"), "%s", tl_err);
		cr_assert_eq(id[0], '\0');
	}
	memset(long_owner, 'a', sizeof long_owner);
	long_owner[256] = '\0';
	cr_assert_eq(create(inst, long_owner, id), TASKBOX_E_INVALID, "%s",
	             tl_err);
	cr_assert(strstr(tl_err, "255"), "%s", tl_err);
	/* Nothing was made for them. */
	cr_assert_eq(root_entries(), 0);

	long_owner[255] = '\0';
	cr_assert_eq(create(inst, long_owner, id), TASKBOX_OK, "%s", tl_err);
	describe(inst, id, &info);
	cr_assert_str_eq(info.owner, long_owner);
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		cr_assert_eq(create(inst, good[i], id), TASKBOX_OK, "%s: %s",
		             good[i], tl_err);
		describe(inst, id, &info);
		cr_assert_str_eq(info.owner, good[i]);
	}
	/* "" is no owner, as NULL. */
	cr_assert_eq(create(inst, "", id), TASKBOX_OK, "%s", tl_err);
	describe(inst, id, &info);
	cr_assert_str_eq(info.owner, "");
	tl_p->ops.fini(inst);
}

Test(local_owner, list_filters_by_owner_and_skips_the_gone)
{
	void *inst = tl_init_ok(), *other = tl_init_ok();
	char a[TASKBOX_SANDBOX_ID_MAX], b[TASKBOX_SANDBOX_ID_MAX];
	char c[TASKBOX_SANDBOX_ID_MAX], d[TASKBOX_SANDBOX_ID_MAX];
	char e[TASKBOX_SANDBOX_ID_MAX], half[600];
	struct seen s = {0};
	int64_t now = time(NULL);
	int i;

	tl_create_owned(inst, 600, ALICE, a);
	tl_create_owned(inst, 600, NULL, b);
	tl_create_owned(inst, 600, "bob@example.com", c);
	tl_create_owned(inst, 600, ALICE, d);
	tl_create_owned(inst, 600, ALICE, e);
	/* A half-made sandbox (no meta.json yet) is not listed. */
	snprintf(half, sizeof half, "%s/00112233445566778899aabbccddeeff",
	         tl_root);
	cr_assert_eq(mkdir(half, 0700), 0);

	list(other, NULL, &s);
	cr_assert_eq(s.n, 5);
	cr_assert_str_eq(s.owners[seen_at(&s, a)], ALICE);
	cr_assert_str_eq(s.owners[seen_at(&s, b)], "");
	cr_assert_str_eq(s.owners[seen_at(&s, c)], "bob@example.com");
	i = seen_at(&s, a);
	cr_assert(s.created[i] >= now - 5 && s.created[i] <= now + 5);
	cr_assert(s.expires[i] >= s.created[i] + 599 &&
	          s.expires[i] <= s.created[i] + 601);

	list(inst, ALICE, &s);
	cr_assert_eq(s.n, 3);
	cr_assert_geq(seen_at(&s, a), 0);
	cr_assert_geq(seen_at(&s, d), 0);
	cr_assert_geq(seen_at(&s, e), 0);
	for (i = 0; i < s.n; i++)
		cr_assert_str_eq(s.owners[i], ALICE);
	list(inst, "alice@example.co", &s); /* exactly, not a prefix */
	cr_assert_eq(s.n, 0);
	list(inst, "", &s);
	cr_assert_eq(s.n, 1);
	cr_assert_str_eq(s.ids[0], b);

	/* each returning nonzero stops the listing, which still succeeds. */
	s.stop_after = 2;
	list(inst, NULL, &s);
	cr_assert_eq(s.n, 2);
	s.stop_after = 0;

	/* Destroyed, expired (the reaper has not come yet) and damaged ones
	 * are left out. */
	cr_assert_eq(tl_p->ops.destroy(inst, a, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	tl_set_deadline(d, time(NULL) - 1);
	snprintf(half, sizeof half, "%s/.owner-%s", tl_root, e);
	cr_assert_eq(unlink(half), 0);
	FILE *f = fopen(half, "w");
	cr_assert_not_null(f);
	fputs("{\"format\":1,\"owner\":5}\n", f);
	fclose(f);
	list(other, NULL, &s);
	cr_assert_eq(s.n, 2, "listed %d", s.n);
	cr_assert_geq(seen_at(&s, b), 0);
	cr_assert_geq(seen_at(&s, c), 0);
	list(other, ALICE, &s);
	cr_assert_eq(s.n, 0);
	/* describe of the damaged one fails rather than guess an owner. */
	void *conn = tl_connect(other, e);
	struct taskbox_sandbox_info info = {.struct_size = sizeof info};
	cr_assert_eq(tl_p->describe(conn, &info, tl_err, sizeof tl_err),
	             TASKBOX_E_IO);
	cr_assert(strstr(tl_err, "owner record"), "%s", tl_err);
	tl_p->ops.close(conn);
	/* Nor does a FIFO in the record's place hang describe or list. */
	cr_assert_eq(unlink(half), 0);
	cr_assert_eq(mkfifo(half, 0600), 0);
	conn = tl_connect(other, e);
	cr_assert_eq(tl_p->describe(conn, &info, tl_err, sizeof tl_err),
	             TASKBOX_E_IO);
	tl_p->ops.close(conn);
	list(other, NULL, &s);
	cr_assert_eq(s.n, 2, "listed %d", s.n);
	tl_p->ops.fini(other);
	tl_p->ops.fini(inst);
}

/* list is thread-safe: listings run while other threads create and
 * destroy sandboxes, and each sees only whole, rightly owned entries. */
struct churn {
	void *inst;
	int stop;
	int bad;    /* entries that broke the filter or were malformed */
	int listed; /* entries seen */
	int failed; /* ops that failed */
};

static int check_alice(void *arg, const struct taskbox_sandbox_info *info)
{
	struct churn *ch = arg;

	if (strcmp(info->owner, ALICE) || strlen(info->id) != 32 ||
	    info->created_s <= 0 || info->expires_s <= info->created_s)
		__atomic_add_fetch(&ch->bad, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ch->listed, 1, __ATOMIC_RELAXED);
	return 0;
}

static void *lister(void *arg)
{
	struct churn *ch = arg;
	char err[TASKBOX_ERRBUF_SIZE];

	while (!__atomic_load_n(&ch->stop, __ATOMIC_RELAXED))
		if (tl_p->list(ch->inst, ALICE, check_alice, ch, err,
		               sizeof err) != TASKBOX_OK)
			__atomic_add_fetch(&ch->failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *maker(void *arg)
{
	struct churn *ch = arg;
	char err[TASKBOX_ERRBUF_SIZE], id[TASKBOX_SANDBOX_ID_MAX];

	for (int i = 0; i < 6; i++) {
		struct taskbox_create_req req = {sizeof req, NULL, 600,
		                                 i % 2 ? "bob" : ALICE};
		if (tl_p->ops.create(ch->inst, &req, id, err, sizeof err) ||
		    tl_p->ops.destroy(ch->inst, id, err, sizeof err))
			__atomic_add_fetch(&ch->failed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

Test(local_owner, list_is_thread_safe)
{
	struct churn ch = {0};
	char keep[TASKBOX_SANDBOX_ID_MAX];
	pthread_t t[4];

	ch.inst = tl_init_ok();
	tl_create_owned(ch.inst, 600, ALICE, keep);
	pthread_create(&t[0], NULL, lister, &ch);
	pthread_create(&t[1], NULL, lister, &ch);
	pthread_create(&t[2], NULL, maker, &ch);
	pthread_create(&t[3], NULL, maker, &ch);
	pthread_join(t[2], NULL);
	pthread_join(t[3], NULL);
	__atomic_store_n(&ch.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	cr_assert_eq(ch.failed, 0);
	cr_assert_eq(ch.bad, 0);
	cr_assert_gt(ch.listed, 0);
	tl_p->ops.fini(ch.inst);
}

/* A sandbox made before owners were recorded has no record: owner "", and
 * its creation time from meta.json. init removes records whose sandbox
 * went without us. */
Test(local_owner, sandboxes_without_a_record)
{
	void *inst = tl_init_ok();
	char id[TASKBOX_SANDBOX_ID_MAX], path[512], orphan[512];
	struct taskbox_sandbox_info info;
	struct seen s = {0};

	tl_create_owned(inst, 600, ALICE, id);
	snprintf(path, sizeof path, "%s/.owner-%s", tl_root, id);
	cr_assert_eq(unlink(path), 0);
	describe(inst, id, &info);
	cr_assert_str_eq(info.owner, "");
	cr_assert_gt(info.created_s, 0);
	list(inst, ALICE, &s);
	cr_assert_eq(s.n, 0);
	list(inst, "", &s);
	cr_assert_eq(s.n, 1);
	tl_p->ops.fini(inst);

	snprintf(orphan, sizeof orphan,
	         "%s/.owner-00112233445566778899aabbccddeeff", tl_root);
	FILE *f = fopen(orphan, "w");
	cr_assert_not_null(f);
	fputs("{\"format\":1,\"owner\":\"x\",\"created\":1}\n", f);
	fclose(f);
	inst = tl_init_ok();
	cr_assert_not(tl_exists(orphan), "init kept %s", orphan);
	tl_p->ops.fini(inst);
}

/* The reaper removes the record with the sandbox, with no host running. */
Test(local_owner, reaper_removes_the_record)
{
	void *inst = tl_init_ok(), *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], dir[512], path[512];

	tl_create_owned(inst, 0, ALICE, id);
	conn = tl_connect(inst, id);
	cr_assert_eq(tl_p->ops.renew(conn, 1, tl_err, sizeof tl_err),
	             TASKBOX_OK, "%s", tl_err);
	tl_p->ops.close(conn);
	tl_p->ops.fini(inst);
	snprintf(dir, sizeof dir, "%s/%s", tl_root, id);
	snprintf(path, sizeof path, "%s/.owner-%s", tl_root, id);
	cr_assert(tl_exists(path));
	cr_assert(tl_wait_gone(dir, 25000), "the reaper left %s", dir);
	cr_assert(tl_wait_gone(path, 5000), "the reaper left %s", path);
}

/* Under bubblewrap a command of the sandbox can neither change its owner
 * record nor make one: not at its path (the root is an empty tmpfs there),
 * nor through the /proc of any process outside (the server's, the
 * reaper's). */
Test(local_owner, bwrap_commands_cannot_touch_the_record)
{
	void *inst = tl_bwrap_init_ok(), *fresh = NULL, *plain, *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], script[2048], before[600], after[600];
	char fake[512];
	struct taskbox_exec_result res;
	struct taskbox_sandbox_info info;
	struct seen s = {0};
	const char *forged = "{\"format\":1,\"owner\":\"mallory\","
	                     "\"created\":1}";
	const char *fake_id = "ffeeddccbbaa99887766554433221100";

	tl_create_owned(inst, 600, ALICE, id);
	record_text(id, before, sizeof before);
	cr_assert(strstr(before, ALICE), "%s", before);
	conn = tl_connect(inst, id);
	snprintf(script, sizeof script,
	         "r='%s' id='%s' f='%s' fake='%s'\n"
	         "ls -A \"$r\"\n"
	         "reaper=$(cut -d' ' -f2 \"$r/$id/reaper.pid\")\n"
	         "for p in \"$r\" /proc/[0-9]*/root\"$r\" "
	         "/proc/%ld/root\"$r\" /proc/\"$reaper\"/root\"$r\"; do\n"
	         "  rm -f \"$p/.owner-$id\" 2>/dev/null\n"
	         "  printf '%%s\\n' \"$f\" > \"$p/.owner-$id\" 2>/dev/null\n"
	         "  printf '%%s\\n' \"$f\" > \"$p/.owner-$fake\" 2>/dev/null\n"
	         "  mv \"$p/.owner-$fake\" \"$p/.owner-$id\" 2>/dev/null\n"
	         "done\n",
	         tl_root, id, forged, fake_id, (long)getpid());
	tl_sh(conn, &res, script);
	/* What the command sees of the root: its own directory only. */
	cr_assert(res.out.len == 33 && !memcmp(res.out.data, id, 32),
	          "the root seen inside: %.*s", (int)res.out.len,
	          (char *)res.out.data);
	tl_res_free(&res);
	tl_p->ops.close(conn);

	record_text(id, after, sizeof after);
	cr_assert_str_eq(after, before, "the record changed");
	snprintf(fake, sizeof fake, "%s/.owner-%s", tl_root, fake_id);
	cr_assert_not(tl_exists(fake), "a command made %s", fake);
	cr_assert_eq(
	    tl_init("{\"root\":\"%s\",\"isolation\":\"bwrap\"}", &fresh),
	    TASKBOX_OK, "%s", tl_err);
	describe(fresh, id, &info);
	cr_assert_str_eq(info.owner, ALICE);
	list(fresh, ALICE, &s);
	cr_assert_eq(s.n, 1);
	list(fresh, "mallory", &s);
	cr_assert_eq(s.n, 0);

	/* An instance of the other isolation lists none of them: it cannot
	 * reach them. */
	plain = tl_init_ok();
	list(plain, NULL, &s);
	cr_assert_eq(s.n, 0);
	tl_p->ops.fini(plain);
	tl_p->ops.fini(fresh);
	tl_p->ops.fini(inst);
}

/* Under bubblewrap a command cannot move its sandbox's deadline: meta.json
 * is bound read-only over itself, so writing it, replacing it by a rename
 * or removing it all fail, and the deadline the host reads stays. */
Test(local_owner, bwrap_commands_cannot_move_the_deadline)
{
	void *inst = tl_bwrap_init_ok(), *fresh = NULL, *conn;
	char id[TASKBOX_SANDBOX_ID_MAX], script[1024];
	struct taskbox_exec_result res;
	struct taskbox_sandbox_info before, after;

	tl_create_owned(inst, 600, ALICE, id);
	describe(inst, id, &before);
	conn = tl_connect(inst, id);
	snprintf(script, sizeof script,
	         "m=\"$PWD/../meta.json\"\n"
	         "[ -s \"$m\" ] || echo unseen\n"
	         "sed 's/\"deadline\":[0-9]*/\"deadline\":9999999999/' \"$m\" "
	         "> forged\n"
	         "cat \"$HOME/forged\" > \"$m\" 2>/dev/null && echo wrote\n"
	         "mv -f forged \"$m\" 2>/dev/null && echo replaced\n"
	         "rm -f \"$m\" 2>/dev/null && [ ! -e \"$m\" ] && echo removed\n"
	         "true\n");
	tl_sh(conn, &res, script);
	cr_assert_eq(res.out.len, 0, "a command changed meta.json: %.*s",
	             (int)res.out.len, (char *)res.out.data);
	tl_res_free(&res);
	tl_p->ops.close(conn);
	cr_assert_eq(
	    tl_init("{\"root\":\"%s\",\"isolation\":\"bwrap\"}", &fresh),
	    TASKBOX_OK, "%s", tl_err);
	describe(fresh, id, &after);
	cr_assert_eq(after.expires_s, before.expires_s);
	cr_assert_lt(after.expires_s, (int64_t)time(NULL) + 700);
	tl_p->ops.fini(fresh);
	tl_p->ops.fini(inst);
}
