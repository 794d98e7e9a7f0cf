/* The cancel, remove and list verbs: they read records and signal only
 * what a record names and /proc confirms. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup.h"

int tb_supervisor_gone(const struct tb_jobject *o)
{
	return !tb_verified(tb_jint(o, "supervisor_pid"),
	                    tb_jint(o, "supervisor_start"));
}

void tb_task_dir(const struct tb_opts *o, char *tdir, size_t len)
{
	struct stat st;

	snprintf(tdir, len, "%s/%s", o->root, o->id);
	if (stat(tdir, &st) < 0 || !S_ISDIR(st.st_mode))
		tb_refuse(TB_NOT_FOUND, "--id: no task %s under %s", o->id,
		          o->root);
}

int tb_read_record(const char *tdir, struct tb_str *raw, struct tb_jobject *o)
{
	char msg[TB_MSG_MAX];
	int rc = tb_status_read(tdir, raw, o, msg, sizeof(msg));

	if (rc < 0)
		tb_refuse(TB_INTERNAL, "%s", msg);
	return rc;
}

void tb_reread(const char *tdir, struct tb_str *raw, struct tb_jobject *o)
{
	struct tb_str again = {0};

	if (tb_read_record(tdir, &again, o) == 1) {
		tb_str_free(raw);
		*raw = again;
	} else {
		tb_str_free(&again);
	}
}

/* TERM, then KILL after the grace, the recorded group of a task whose
 * supervisor is gone, if its leader is verified when the TERM goes; then
 * waits (within END and TB_KILL_SETTLE_MS) for its members to be gone. */
static void kill_orphan_group(const struct tb_jobject *o, long long end)
{
	long long pgid = tb_jint(o, "pgid"), start = tb_jint(o, "pgid_start");
	long long grace = tb_mono_ms() + TB_TERM_GRACE_MS, left;

	if (!tb_verified(pgid, start))
		return;
	if (kill(-(pid_t)pgid, SIGTERM) < 0)
		return;
	if (grace > end)
		grace = end;
	/* The group id stays this task's while a member holds it, and it is
	 * looked at every 20 ms: far too often for it to have been freed and
	 * handed to a new group in between. A member that ignores the TERM
	 * gets the KILL even when the leader took the TERM and went. */
	while (tb_mono_ms() < grace && tb_group_live(pgid))
		tb_sleep_ms(20);
	if (tb_group_live(pgid))
		kill(-(pid_t)pgid, SIGKILL);
	left = end - tb_mono_ms();
	tb_group_await_gone(
	    pgid, left < TB_KILL_SETTLE_MS ? left : TB_KILL_SETTLE_MS, -1);
}

int tb_say_and_free(struct tb_str *out, struct tb_str *raw,
                    struct tb_jobject *o)
{
	tb_say(out);
	tb_str_free(out);
	tb_str_free(raw);
	free(o);
	return 0;
}

int tb_verb_cancel(const struct tb_opts *opts)
{
	char tdir[TB_MAX_PATH + 64];
	struct tb_str raw = {0}, out = {0};
	struct tb_jobject *o = malloc(sizeof(*o));
	long long wait = 3, end, pid;

	if (!o)
		tb_oom();
	if (opts->wait)
		wait = tb_int_option("--wait", opts->wait, 0, 60);
	tb_task_dir(opts, tdir, sizeof(tdir));
	if (tb_read_record(tdir, &raw, o) == 0)
		tb_refuse(TB_NOT_FOUND, "task %s has no status record",
		          opts->id);
	if (tb_state_terminal(o))
		goto print;
	end = tb_mono_ms() + wait * 1000;
	if (tb_supervisor_gone(o)) {
		/* A supervisor that just finished wrote its final record. */
		tb_reread(tdir, &raw, o);
		if (!tb_state_terminal(o)) {
			kill_orphan_group(o, end);
			tb_add_flag(&out, &raw, o, "supervisor_gone");
			goto say;
		}
		goto print;
	}
	pid = tb_jint(o, "supervisor_pid");
	kill((pid_t)pid, SIGTERM); /* ESRCH: its final record follows */
	/* Most tasks end within milliseconds of the TERM: look again after
	 * 1 ms, then twice as long each time, up to 20 ms. */
	for (long pause = 1; !tb_state_terminal(o) && tb_mono_ms() < end;) {
		tb_sleep_ms(pause);
		tb_reread(tdir, &raw, o);
		pause = pause * 2 > 20 ? 20 : pause * 2;
	}
print:
	tb_str_add(&out, raw.p, raw.len);
say:
	return tb_say_and_free(&out, &raw, o);
}

int tb_verb_remove(const struct tb_opts *opts)
{
	char tdir[TB_MAX_PATH + 64], doomed[TB_MAX_PATH + 128];
	struct tb_str raw = {0}, out = {0};
	struct tb_jobject *o = malloc(sizeof(*o));
	int lock, has;

	if (!o)
		tb_oom();
	lock = tb_root_lock(opts->root, 0);
	if (lock < 0)
		tb_refuse(TB_NOT_FOUND, "--root: %s does not exist",
		          opts->root);
	tb_task_dir(opts, tdir, sizeof(tdir));
	has = tb_read_record(tdir, &raw, o);
	if (has && !tb_state_terminal(o) &&
	    (!tb_supervisor_gone(o) ||
	     tb_verified(tb_jint(o, "pgid"), tb_jint(o, "pgid_start"))))
		tb_refuse(TB_RUNNING,
		          "task %s is still running; cancel it first",
		          opts->id);
	snprintf(doomed, sizeof(doomed), "%s/.removing-%s-%ld", opts->root,
	         opts->id, (long)getpid());
	if (rename(tdir, doomed) < 0)
		tb_refuse(TB_INTERNAL, "internal error: renaming %s: %s", tdir,
		          strerror(errno));
	if (has)
		tb_key_release(opts->root, o, opts->id);
	if (tb_remove_tree(doomed) < 0)
		tb_refuse(TB_INTERNAL, "internal error: removing %s: %s",
		          doomed, strerror(errno));
	close(lock);
	if (has) {
		tb_add_flag(&out, &raw, o, "removed");
	} else {
		tb_str_cstr(&out, "{\"task_id\":");
		tb_json_str(&out, opts->id, strlen(opts->id));
		tb_str_cstr(&out, ",\"removed\":true}");
	}
	return tb_say_and_free(&out, &raw, o);
}

struct listed {
	char id[33];
	long long started_at;
	struct tb_str json;
};

/* Newest first: started_at, then task_id, both descending. */
static int newest_first(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;

	if (x->started_at != y->started_at)
		return x->started_at < y->started_at ? 1 : -1;
	return -strcmp(x->id, y->id);
}

/* One task's entry of list: its record, or an error object. */
static void list_entry(const char *root, struct listed *e, struct tb_jobject *o)
{
	char tdir[TB_MAX_PATH + 64], msg[TB_MSG_MAX];
	struct tb_str raw = {0};
	int rc;

	snprintf(tdir, sizeof(tdir), "%s/%s", root, e->id);
	rc = tb_status_read(tdir, &raw, o, msg, sizeof(msg));
	e->started_at = 0;
	if (rc <= 0) {
		const char *why = rc < 0 ? msg : "no status record";

		tb_str_cstr(&e->json, "{\"task_id\":");
		tb_json_str(&e->json, e->id, 32);
		tb_str_cstr(&e->json, ",\"error\":");
		tb_json_str(&e->json, why, strlen(why));
		tb_str_cstr(&e->json, "}");
	} else {
		long long at = tb_jint(o, "started_at");

		e->started_at = at == TB_NULL ? 0 : at;
		if (!tb_state_terminal(o) && tb_supervisor_gone(o))
			tb_add_flag(&e->json, &raw, o, "supervisor_gone");
		else
			tb_str_add(&e->json, raw.p, raw.len);
	}
	tb_str_free(&raw);
}

int tb_verb_list(const struct tb_opts *opts)
{
	char(*names)[33] = NULL;
	struct listed *entries;
	struct tb_jobject *o = malloc(sizeof(*o));
	struct tb_str out = {0};
	size_t n, got;

	if (!o)
		tb_oom();
	n = tb_task_names(opts->root, NULL, 0);
	names = calloc(n + 1, sizeof(*names));
	entries = calloc(n + 1, sizeof(*entries));
	if (!names || !entries)
		tb_oom();
	got = tb_task_names(opts->root, names, n);
	if (got < n)
		n = got;
	for (size_t i = 0; i < n; i++) {
		memcpy(entries[i].id, names[i], 33);
		list_entry(opts->root, &entries[i], o);
	}
	qsort(entries, n, sizeof(*entries), newest_first);
	tb_str_cstr(&out, "{\"tasks\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			tb_str_add(&out, ",", 1);
		tb_str_add(&out, entries[i].json.p, entries[i].json.len);
		tb_str_free(&entries[i].json);
	}
	tb_str_cstr(&out, "]}");
	tb_say(&out);
	tb_str_free(&out);
	free(names);
	free(entries);
	free(o);
	return 0;
}
