/* A task's process group after its SIGKILL: whether any member still runs,
 * and a bounded wait for the last one to die, so that a terminal record is
 * never read while a killed member is still on its way out. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sup.h"

/* Whether process NAME (a /proc entry) is of group PGID and not a zombie. */
static int live_member(const char *name, long long pgid)
{
	struct tb_proc proc;

	return tb_proc_stat(strtoll(name, NULL, 10), &proc) == 0 &&
	       proc.pgrp == pgid && !strchr("ZXx", proc.state);
}

int tb_group_live(long long pgid)
{
	struct dirent *e;
	DIR *dir;
	int found = 0;

	if (pgid <= 0 || pgid == TB_NULL)
		return 0;
	/* No member at all, not even a zombie: the usual case, one call. */
	if (kill(-(pid_t)pgid, 0) < 0 && errno == ESRCH)
		return 0;
	dir = opendir("/proc");
	if (!dir)
		return 0;
	while (!found && (e = readdir(dir)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			found = live_member(e->d_name, pgid);
	closedir(dir);
	return found;
}

void tb_group_await_gone(long long pgid, long long within_ms, int beat_dfd)
{
	long long now = tb_mono_ms(), end = now + within_ms, beat_at = now;
	long pause = 1;

	while (tb_group_live(pgid) && (now = tb_mono_ms()) < end) {
		/* The supervisor's beat goes on while it waits here. */
		if (beat_dfd >= 0 && now >= beat_at) {
			tb_heartbeat_write(beat_dfd);
			beat_at = now + TB_HEARTBEAT_MS / 2;
		}
		tb_sleep_ms(pause < end - now ? pause : (long)(end - now));
		pause = pause * 2 > 20 ? 20 : pause * 2;
	}
}
