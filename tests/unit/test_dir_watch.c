/* Task directories watched through one inotify instance: a subscription
 * fires when the status record is renamed into place, when its directory
 * goes and, if it asked for output, when stdout or stderr is written
 * (unless held back: then only noted); never for anything else; many
 * subscriptions share a directory's watch and leave nothing behind. */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "open_fds.h"
#include "tasks/dir_watch.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/tb-dir-watch-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	tb_dir_watch_stop();
}

TestSuite(dir_watch, .init = setup, .fini = teardown);

/* Whether w fires within ms (then reset), by polling its descriptor as a
 * parked wait does. */
static bool fires_within(struct tb_dir_watch *w, int ms)
{
	struct pollfd p = {.fd = tb_dir_watch_fd(w), .events = POLLIN};

	if (poll(&p, 1, ms) != 1)
		return false;
	cr_assert(tb_dir_watch_fired(w));
	cr_assert_not(tb_dir_watch_fired(w), "fired resets it");
	return true;
}

/* Appends text to the file name in the directory. */
static void append(const char *name, const char *text)
{
	char path[128];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Renames a new file into the directory as name, as the supervisor puts
 * its status record in place. */
static void put(const char *name)
{
	char from[128], to[128];

	snprintf(from, sizeof from, "%s/.%s.tmp", dir, name);
	snprintf(to, sizeof to, "%s/%s", dir, name);
	cr_assert_eq(close(open(from, O_WRONLY | O_CREAT, 0600)), 0);
	cr_assert_eq(rename(from, to), 0);
}

Test(dir_watch, the_status_record_put_in_place_fires)
{
	struct tb_dir_watch *w = tb_dir_watch_add(dir, false, 0, 0);

	cr_assert_not_null(w);
	cr_assert_not(fires_within(w, 50), "nothing happened yet");
	put("status.json");
	cr_assert(fires_within(w, 2000));
	tb_dir_watch_remove(w);
}

Test(dir_watch, output_fires_only_who_asked_for_it)
{
	struct tb_dir_watch *ends = tb_dir_watch_add(dir, false, 0, 0);
	struct tb_dir_watch *grows = tb_dir_watch_add(dir, true, 0, 0);

	cr_assert_not_null(ends);
	cr_assert_not_null(grows);
	append("stdout", "one\n");
	cr_assert(fires_within(grows, 2000));
	append("stderr", "two\n");
	cr_assert(fires_within(grows, 2000));
	cr_assert_not(fires_within(ends, 50), "output is not the end");
	/* Neither fires for other files, or for other names renamed in. */
	append("heartbeat", "3\n");
	put("status.json.old");
	append("stdin", "x");
	cr_assert_not(fires_within(grows, 100));
	cr_assert_not(fires_within(ends, 0));
	put("status.json");
	cr_assert(fires_within(ends, 2000));
	cr_assert(fires_within(grows, 2000));
	tb_dir_watch_remove(ends);
	tb_dir_watch_remove(grows);
}

Test(dir_watch, held_output_is_noted_not_fired)
{
	struct tb_dir_watch *w = tb_dir_watch_add(dir, true, 0, 0);
	struct pollfd p = {.events = POLLIN};
	bool noted = false;

	cr_assert_not_null(w);
	p.fd = tb_dir_watch_fd(w);
	tb_dir_watch_hold(w, true);
	append("stdout", "one\n");
	for (int i = 0; i < 200 && !noted; i++) {
		cr_assert_eq(poll(&p, 1, 0), 0, "a held write fired");
		noted = tb_dir_watch_fired(w);
		if (!noted)
			usleep(10000);
	}
	cr_assert(noted, "the held write is noted");
	cr_assert_not(tb_dir_watch_fired(w), "fired resets it");
	/* The record still fires at once; a write fires again once let
	 * through. */
	put("status.json");
	cr_assert(fires_within(w, 2000));
	tb_dir_watch_hold(w, false);
	append("stdout", "two\n");
	cr_assert(fires_within(w, 2000));
	tb_dir_watch_remove(w);
}

Test(dir_watch, subscribers_share_a_watch_and_outlive_each_other)
{
	struct tb_dir_watch *w[3];

	for (int i = 0; i < 3; i++)
		cr_assert_not_null(w[i] = tb_dir_watch_add(dir, i == 2, 0, 0));
	tb_dir_watch_remove(w[0]);
	put("status.json");
	cr_assert(fires_within(w[1], 2000));
	cr_assert(fires_within(w[2], 2000));
	tb_dir_watch_remove(w[1]);
	append("stdout", "more\n");
	cr_assert(fires_within(w[2], 2000), "the last one still watches");
	tb_dir_watch_remove(w[2]);
	/* A new subscription after the watch ended gets a new one. */
	w[0] = tb_dir_watch_add(dir, false, 0, 0);
	cr_assert_not_null(w[0]);
	put("status.json");
	cr_assert(fires_within(w[0], 2000));
	tb_dir_watch_remove(w[0]);
}

Test(dir_watch, the_directory_gone_fires)
{
	struct tb_dir_watch *w = tb_dir_watch_add(dir, false, 0, 0);
	char cmd[128];

	cr_assert_not_null(w);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert(fires_within(w, 2000));
	tb_dir_watch_remove(w);
	cr_assert_eq(mkdir(dir, 0700), 0); /* for teardown */
}

Test(dir_watch, what_cannot_be_watched_is_null)
{
	char path[128];

	snprintf(path, sizeof path, "%s/none", dir);
	cr_assert_null(tb_dir_watch_add(path, false, 0, 0),
	               "no such directory");
	append("file", "x");
	snprintf(path, sizeof path, "%s/file", dir);
	cr_assert_null(tb_dir_watch_add(path, true, 0, 0), "not a directory");
}

Test(dir_watch, fire_is_a_change_found_by_hand)
{
	struct tb_dir_watch *w = tb_dir_watch_add(dir, true, 0, 0);

	cr_assert_not_null(w);
	tb_dir_watch_fire(w);
	cr_assert(fires_within(w, 0));
	tb_dir_watch_remove(w);
}

Test(dir_watch, stop_leaves_no_descriptor)
{
	int before = open_fds();
	struct tb_dir_watch *w[64];

	for (int i = 0; i < 64; i++)
		cr_assert_not_null(w[i] = tb_dir_watch_add(dir, i % 2, 0, 0));
	put("status.json");
	for (int i = 0; i < 64; i++) {
		cr_assert(fires_within(w[i], 2000));
		tb_dir_watch_remove(w[i]);
	}
	tb_dir_watch_stop();
	cr_assert_eq(open_fds(), before);
}
