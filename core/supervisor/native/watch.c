/* The watch verb: one verb per sandbox answers for every task a host waits
 * on, as soon as one of its interests is met (docs/supervisor.md, watch). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup.h"

/* The most supervisors one watch verb holds a pidfd of. */
#define MAX_PIDFDS 128
/* Ends that happen together are answered together: the pause between the
 * first interest met and the look that answers. */
#define SETTLE_MS 5

enum look { RUNNING, TERMINAL, GONE, MISSING };

/* One distinct task of the interests and what the last look saw. */
struct wtask {
	char *tdir;
	struct tb_str raw;
	struct tb_jobject *o;
	enum look state;
	int offsets, pidfd;
	long long out_size, err_size;
};

struct watch {
	struct tb_interest *in;
	size_t nin, ntasks;
	struct wtask *t;
	int renamed, written;
	char lease[TB_MAX_PATH + 96]; /* empty: no lease */
	const char *lease_name;
	int lease_wd; /* the watch of the lease's directory, or -1 */
	long long gen;
};

static long long log_size(const char *tdir, const char *stream)
{
	char path[TB_MAX_PATH + 80];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tdir, stream);
	return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* Looks at task T: its record, its supervisor and (given offsets) its
 * logs. A terminal record never changes, so it is not read again. */
static void look(struct wtask *t)
{
	struct stat st;
	int gone;

	if (t->state == TERMINAL)
		return;
	if (stat(t->tdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		t->state = MISSING;
		return;
	}
	tb_str_free(&t->raw);
	if (tb_read_record(t->tdir, &t->raw, t->o) == 0) {
		t->state = MISSING;
		return;
	}
	gone = !tb_state_terminal(t->o) && tb_supervisor_gone(t->o);
	/* A supervisor that just finished wrote its final record. */
	if (gone)
		tb_reread(t->tdir, &t->raw, t->o);
	t->state = tb_state_terminal(t->o) ? TERMINAL : gone ? GONE : RUNNING;
	if (t->offsets && t->state == RUNNING) {
		t->out_size = log_size(t->tdir, "stdout");
		t->err_size = log_size(t->tdir, "stderr");
	}
}

static void look_all(struct watch *w)
{
	for (size_t i = 0; i < w->ntasks; i++)
		look(&w->t[i]);
}

static int met(const struct watch *w, const struct tb_interest *in)
{
	const struct wtask *t = &w->t[in->task];

	return t->state != RUNNING || (in->so >= 0 && t->out_size > in->so) ||
	       (in->eo >= 0 && t->err_size > in->eo);
}

static int any_met(const struct watch *w)
{
	for (size_t i = 0; i < w->nin; i++)
		if (met(w, &w->in[i]))
			return 1;
	return 0;
}

/* Appends the answer's entries for every interest met at the last look to
 * OUT; returns how many. */
static size_t answers(const struct watch *w, struct tb_str *out)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nin; i++) {
		const struct tb_interest *in = &w->in[i];
		const struct wtask *t = &w->t[in->task];
		struct tb_str extra = {0};

		if (!met(w, in))
			continue;
		tb_str_fmt(out, "%s{\"index\":%zu,", n++ ? "," : "", i);
		if (t->state == MISSING) {
			tb_str_cstr(out, "\"missing\":true}");
			continue;
		}
		if (t->state == GONE)
			tb_str_cstr(&extra, "\"supervisor_gone\":true");
		/* The pages are read after the record: a terminal record's
		 * pages hold every byte it counts. */
		if (in->pl > 0) {
			tb_str_cstr(&extra, extra.len ? "," : "");
			tb_add_page(&extra, t->tdir, "stdout", in->spo, in->pl);
			tb_str_cstr(&extra, ",");
			tb_add_page(&extra, t->tdir, "stderr", in->epo, in->pl);
		}
		tb_str_cstr(out, "\"record\":");
		tb_add_members(out, &t->raw, t->o, &extra);
		tb_str_cstr(out, "}");
		tb_str_free(&extra);
	}
	return n;
}

static int by_id(const void *a, const void *b)
{
	const struct tb_interest *const *x = a, *const *y = b;

	return strcmp((*x)->id, (*y)->id);
}

/* Makes W's table of distinct tasks (sorted, so without a quadratic
 * search) and points each interest at its task. */
static void tasks_make(struct watch *w, const char *root)
{
	struct tb_interest **s = malloc(w->nin * sizeof(*s));

	w->t = calloc(w->nin, sizeof(*w->t));
	if (!s || !w->t)
		tb_oom();
	for (size_t i = 0; i < w->nin; i++)
		s[i] = &w->in[i];
	qsort(s, w->nin, sizeof(*s), by_id);
	for (size_t i = 0; i < w->nin; i++) {
		struct wtask *t;

		if (i == 0 || strcmp(s[i]->id, s[i - 1]->id) != 0) {
			size_t len = strlen(root) + 34;

			t = &w->t[w->ntasks++];
			t->tdir = malloc(len);
			t->o = malloc(sizeof(*t->o));
			if (!t->tdir || !t->o)
				tb_oom();
			snprintf(t->tdir, len, "%s/%s", root, s[i]->id);
			t->pidfd = -1;
		}
		t = &w->t[w->ntasks - 1];
		s[i]->task = w->ntasks - 1;
		t->offsets |= s[i]->so >= 0 || s[i]->eo >= 0;
	}
	free(s);
}

/* The watches, in place before the first look so that nothing falls
 * between: a record put in place in each task directory (and, for tasks
 * with offsets, a log written; a second instance, so that its notices can
 * be held back), the lease's directory, and the running tasks'
 * supervisors (a pidfd opened before the supervisor is verified). */
static void watches_make(struct watch *w)
{
	const uint32_t base = IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
	size_t pidfds = 0;

	w->lease_wd = -1;
	w->renamed = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->written = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	for (size_t i = 0; i < w->ntasks; i++) {
		struct wtask *t = &w->t[i];

		if (w->renamed >= 0)
			inotify_add_watch(w->renamed, t->tdir,
			                  IN_MOVED_TO | base);
		if (w->written >= 0 && t->offsets)
			inotify_add_watch(w->written, t->tdir,
			                  IN_MODIFY | base);
	}
	if (w->renamed >= 0 && w->lease[0]) {
		char dir[sizeof(w->lease)];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", w->lease);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		w->lease_wd = inotify_add_watch(w->renamed, dir,
		                                IN_MOVED_TO | IN_ONLYDIR);
	}
	for (size_t i = 0; i < w->ntasks && pidfds < MAX_PIDFDS; i++) {
		struct wtask *t = &w->t[i];
		char msg[TB_MSG_MAX];

		if (tb_status_read(t->tdir, &t->raw, t->o, msg, sizeof(msg)) ==
		        1 &&
		    !tb_state_terminal(t->o)) {
			t->pidfd = tb_supervisor_pidfd(t->o);
			pidfds += t->pidfd >= 0;
		}
		tb_str_free(&t->raw);
	}
}

/* Whether every look the verb needs is woken by an event: then it looks
 * anyway only every TB_WATCHED_LOOK_MS. */
static int all_watched(const struct watch *w)
{
	int offsets = 0;

	for (size_t i = 0; i < w->ntasks; i++) {
		offsets |= w->t[i].offsets;
		if (w->t[i].state == RUNNING && w->t[i].pidfd < 0)
			return 0;
	}
	return w->renamed >= 0 && (w->written >= 0 || !offsets);
}

/* Pauses MS, or less once one of W's descriptors is readable (the written
 * one left out when HELD). Returns a mask: 1 the renamed notices, 2 the
 * written ones, 4 a supervisor's pidfd. */
static unsigned pause_ms(const struct watch *w, struct pollfd *p, int held,
                         long long ms)
{
	size_t n = 0;
	unsigned ready = 0;

	p[n++] = (struct pollfd){.fd = w->renamed, .events = POLLIN};
	p[n++] =
	    (struct pollfd){.fd = held ? -1 : w->written, .events = POLLIN};
	for (size_t i = 0; i < w->ntasks; i++)
		if (w->t[i].pidfd >= 0)
			p[n++] = (struct pollfd){.fd = w->t[i].pidfd,
			                         .events = POLLIN};
	if (poll(p, (nfds_t)n, (int)ms) < 0) {
		if (errno != EINTR)
			tb_sleep_ms((long)ms);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (p[i].fd >= 0 && (p[i].revents & POLLIN))
			ready |= i == 0 ? 1u : i == 1 ? 2u : 4u;
	return ready;
}

/* Reads off the notices queued on W's inotify descriptor FD; returns
 * whether one matters: a directory gone or the queue overflowed, the lease
 * renamed into its directory, or (LOGS) a log written, else a record put
 * in place. A heartbeat rewritten every second in each task directory
 * wakes the verb but does not make it look. */
static int notices(const struct watch *w, int fd, int logs)
{
	const uint32_t self =
	    IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW;
	char buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	int hit = 0;
	ssize_t n;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const void *)p;

			p += sizeof(*e) + e->len;
			if (e->mask & self)
				hit = 1;
			else if (!e->len)
				continue;
			else if (e->wd == w->lease_wd)
				hit |= strcmp(e->name, w->lease_name) == 0;
			else if (logs)
				hit |= strcmp(e->name, "stdout") == 0 ||
				       strcmp(e->name, "stderr") == 0;
			else
				hit |= strcmp(e->name, "status.json") == 0;
		}
	}
	return hit;
}

static int superseded(const struct watch *w)
{
	return w->lease[0] && tb_lease_read(w->lease) > w->gen;
}

/* Looks at every task; writes the answer to OUT and returns 1 when it is
 * time for one (superseded, or an interest met). */
static int look_and_answer(struct watch *w, struct tb_str *out)
{
	size_t at = out->len;

	if (superseded(w)) {
		tb_str_cstr(out, "{\"answers\":[],\"superseded\":true}");
		return 1;
	}
	look_all(w);
	if (!any_met(w))
		return 0;
	/* Ends that happen together are answered together. */
	tb_sleep_ms(SETTLE_MS);
	look_all(w);
	tb_str_cstr(out, "{\"answers\":[");
	if (answers(w, out)) {
		tb_str_cstr(out, "]}");
		return 1;
	}
	out->len = at; /* a record seen missing came back */
	return 0;
}

/* Waits until an interest is met, the time is up or the lease is
 * superseded, and writes the answer's line to OUT. */
static void watch_loop(struct watch *w, long long end, struct tb_str *out)
{
	struct pollfd *p = malloc((w->ntasks + 2) * sizeof(*p));
	long long look_at = 0;
	int held = 0, due = 1;

	if (!p)
		tb_oom();
	for (;;) {
		long long now, ms;
		unsigned ready;
		int wrote;

		if (due) {
			if (look_and_answer(w, out))
				break;
			/* As in wait: a write that settled nothing holds the
			 * next notice of a write back for TB_LOOK_MS; the
			 * records put in place and the supervisors' exits
			 * still wake the verb. */
			look_at = tb_mono_ms() + (all_watched(w) && !held
			                              ? TB_WATCHED_LOOK_MS
			                              : TB_LOOK_MS);
		}
		now = tb_mono_ms();
		if (now >= end) {
			tb_str_cstr(out, "{\"answers\":[]}");
			break;
		}
		ms = (look_at < end ? look_at : end) - now;
		ready = pause_ms(w, p, held, ms < 0 ? 0 : ms);
		wrote = (ready & 2u) && notices(w, w->written, 1);
		due = ((ready & 1u) && notices(w, w->renamed, 0)) || wrote ||
		      (ready & 4u) || tb_mono_ms() >= look_at;
		if (due)
			held = wrote;
	}
	free(p);
}

int tb_verb_watch(const struct tb_opts *opts)
{
	struct watch w = {0};
	struct tb_str out = {0};
	long long wait = 3, end;

	if (opts->wait)
		wait = tb_int_option("--wait", opts->wait, 0, 60);
	tb_interests_parse(opts->tasks, &w.in, &w.nin);
	w.gen = tb_lease_options(opts);
	w.lease_name = opts->lease;
	if (w.gen >= 0 && !tb_lease_take(opts->root, opts->lease, w.gen,
	                                 w.lease, sizeof(w.lease))) {
		tb_str_cstr(&out, "{\"answers\":[],\"superseded\":true}");
		tb_say(&out);
		tb_str_free(&out);
		free(w.in);
		return 0;
	}
	end = tb_mono_ms() + wait * 1000;
	tasks_make(&w, opts->root);
	watches_make(&w);
	watch_loop(&w, end, &out);
	tb_say(&out);
	tb_str_free(&out);
	/* After the answer: closing an inotify descriptor with a watch waits
	 * for the kernel's grace period. */
	if (w.renamed >= 0)
		close(w.renamed);
	if (w.written >= 0)
		close(w.written);
	for (size_t i = 0; i < w.ntasks; i++) {
		if (w.t[i].pidfd >= 0)
			close(w.t[i].pidfd);
		tb_str_free(&w.t[i].raw);
		free(w.t[i].tdir);
		free(w.t[i].o);
	}
	free(w.t);
	free(w.in);
	return 0;
}
