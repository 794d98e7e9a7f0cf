/* The wait verb: answers once a task ends, its supervisor is gone, or a log
 * grows past an offset, or when its time is up; a host waiting from afar
 * then learns of the end in the time the answer takes to reach it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "sup.h"

/* How often the task is looked at, in milliseconds. */
#define LOOK_MS 5

/* Whether TDIR's log STREAM holds a byte at OFFSET (never when OFFSET is
 * negative: not asked for). */
static int grown(const char *tdir, const char *stream, long long offset)
{
	char path[TB_MAX_PATH + 80];
	struct stat st;

	if (offset < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", tdir, stream);
	return stat(path, &st) == 0 && (long long)st.st_size > offset;
}

/* The offset option's value, or -1 when it was not given. */
static long long offset_option(const char *name, const char *value)
{
	return value ? tb_int_option(name, value, 0, TB_MAX_OFFSET) : -1;
}

int tb_verb_wait(const struct tb_opts *opts)
{
	char tdir[TB_MAX_PATH + 64];
	struct tb_str raw = {0}, out = {0};
	struct tb_jobject *o = malloc(sizeof(*o));
	long long wait = 3, end, left, out_at, err_at;
	struct stat st;

	if (!o)
		tb_oom();
	if (opts->wait)
		wait = tb_int_option("--wait", opts->wait, 0, 60);
	out_at = offset_option("--stdout-offset", opts->stdout_offset);
	err_at = offset_option("--stderr-offset", opts->stderr_offset);
	tb_task_dir(opts, tdir, sizeof(tdir));
	if (tb_read_record(tdir, &raw, o) == 0)
		tb_refuse(TB_NOT_FOUND, "task %s has no status record",
		          opts->id);
	end = tb_mono_ms() + wait * 1000;
	while (!tb_state_terminal(o)) {
		if (tb_supervisor_gone(o)) {
			/* A supervisor that just finished wrote its final
			 * record. */
			tb_reread(tdir, &raw, o);
			if (!tb_state_terminal(o)) {
				tb_add_flag(&out, &raw, o, "supervisor_gone");
				goto say;
			}
			break;
		}
		left = end - tb_mono_ms();
		if (grown(tdir, "stdout", out_at) ||
		    grown(tdir, "stderr", err_at) || left <= 0)
			break;
		tb_sleep_ms(left < LOOK_MS ? left : LOOK_MS);
		if (stat(tdir, &st) < 0)
			tb_refuse(TB_NOT_FOUND, "task %s was removed",
			          opts->id);
		tb_reread(tdir, &raw, o);
	}
	tb_str_add(&out, raw.p, raw.len);
say:
	return tb_say_and_free(&out, &raw, o);
}
