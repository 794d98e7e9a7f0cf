/* The write and resize verbs: bytes, eof and window sizes for a running
 * task's input, through the FIFOs its supervisor reads (docs/supervisor.md,
 * write and resize). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "sup.h"

/* Characters of the base64 of TB_MAX_DATA bytes. */
#define MAX_DATA_CHARS ((TB_MAX_DATA + 2) / 3 * 4)

/* Reads the task's record into RAW and O and refuses unless it is running
 * with input (WANT_TTY: with a terminal). */
static void running_with_input(const struct tb_opts *opts, const char *tdir,
                               struct tb_str *raw, struct tb_jobject *o,
                               int want_tty)
{
	const struct tb_jmember *state;

	if (tb_read_record(tdir, raw, o) == 0)
		tb_refuse(TB_NOT_FOUND, "task %s has no status record",
		          opts->id);
	if (tb_state_terminal(o)) {
		state = tb_jget(o, "state");
		tb_refuse(TB_CLOSED,
		          "task %s has ended (%.*s): its %s is closed",
		          opts->id, (int)state->val_len - 2, state->val + 1,
		          want_tty ? "terminal" : "stdin");
	}
	if (want_tty && !tb_jstr_is(o, "stdin", "tty"))
		tb_refuse(TB_CLOSED,
		          "task %s has no terminal: start it with stdin tty",
		          opts->id);
	if (!tb_jstr_is(o, "stdin", "pipe") && !tb_jstr_is(o, "stdin", "tty"))
		tb_refuse(TB_CLOSED,
		          "task %s was started without stdin: start it with "
		          "stdin pipe or tty",
		          opts->id);
}

/* Opens the FIFO NAME of TDIR write-only and non-blocking; refuses closed
 * when nobody reads it or it is missing: the task ended meanwhile, or its
 * supervisor is gone. */
static int open_fifo(const char *tdir, const char *name, const char *id)
{
	char path[TB_MAX_PATH + 128];
	struct tb_str raw = {0};
	struct tb_jobject *o;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno != ENXIO && errno != ENOENT)
		tb_refuse(TB_INTERNAL, "internal error: %s: %s", path,
		          strerror(errno));
	o = malloc(sizeof(*o));
	if (!o)
		tb_oom();
	if (tb_read_record(tdir, &raw, o) == 1 && tb_state_terminal(o)) {
		const struct tb_jmember *state = tb_jget(o, "state");

		tb_refuse(TB_CLOSED,
		          "task %s has ended (%.*s): its stdin is closed", id,
		          (int)state->val_len - 2, state->val + 1);
	}
	tb_refuse(TB_CLOSED, "the supervisor of task %s is gone", id);
}

/* Writes DATA (N bytes) to the FIFO FD in order, waiting for room up to
 * TB_WRITE_WAIT_MS in all. Returns the bytes the FIFO took. */
static size_t write_fifo(int fd, const unsigned char *data, size_t n)
{
	long long end = tb_mono_ms() + TB_WRITE_WAIT_MS;
	size_t off = 0;

	while (off < n) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		ssize_t w = write(fd, data + off, n - off);
		long long left;

		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EPIPE)
			break; /* the supervisor went away meanwhile */
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			tb_refuse(TB_INTERNAL, "internal error: stdin: %s",
			          strerror(errno));
		left = end - tb_mono_ms();
		if (left <= 0)
			break;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			tb_refuse(TB_INTERNAL, "internal error: poll: %s",
			          strerror(errno));
	}
	return off;
}

/* Sends LINE (at most PIPE_BUF bytes: one write(2), never split) to the
 * control FIFO FD, which it closes. */
static void send_control(int fd, const char *id, const char *line)
{
	size_t n = strlen(line);

	if (write_fifo(fd, (const unsigned char *)line, n) < n)
		tb_refuse(TB_INTERNAL, "the control FIFO of task %s is full",
		          id);
	close(fd);
}

/* Takes TDIR's stdin.lock (exclusive), so writers never interleave. */
static int lock_stdin(const char *tdir)
{
	char path[TB_MAX_PATH + 128];

	snprintf(path, sizeof(path), "%s/stdin.lock", tdir);
	return tb_lock_file(path);
}

/* Reads write's data from stdin (--data -) into DATA: at most
 * TB_MAX_DATA bytes, then end of file. Returns the byte count. */
static size_t data_from_stdin(unsigned char *data)
{
	size_t n = 0;

	for (;;) {
		unsigned char extra;
		ssize_t r = n < TB_MAX_DATA ? read(0, data + n, TB_MAX_DATA - n)
		                            : read(0, &extra, 1);

		if (r == 0)
			return n;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			tb_refuse(TB_INTERNAL, "internal error: stdin: %s",
			          strerror(errno));
		if (n == TB_MAX_DATA)
			tb_refuse(TB_INVALID,
			          "--data -: stdin holds more than %d bytes",
			          TB_MAX_DATA);
		n += (size_t)r;
	}
}

int tb_verb_write(const struct tb_opts *opts)
{
	static unsigned char data[TB_MAX_DATA];
	char tdir[TB_MAX_PATH + 64], path[TB_MAX_PATH + 128];
	struct tb_str raw = {0}, out = {0};
	struct tb_jobject *o;
	size_t n = 0, written;
	const char *b64 = opts->data ? opts->data : "";
	int eof = 0, lock, fd, closed = 0;

	if (strcmp(b64, "-") == 0)
		n = data_from_stdin(data);
	else if (strlen(b64) > MAX_DATA_CHARS ||
	         tb_base64_decode(b64, strlen(b64), data, sizeof(data), &n) < 0)
		tb_refuse(TB_INVALID,
		          "--data: must be standard base64 with padding of at "
		          "most %d bytes",
		          TB_MAX_DATA);
	if (opts->eof && strcmp(opts->eof, "0") && strcmp(opts->eof, "1"))
		tb_refuse(TB_INVALID, "--eof: must be 0 or 1");
	eof = opts->eof && strcmp(opts->eof, "1") == 0;
	signal(SIGPIPE, SIG_IGN);
	o = malloc(sizeof(*o));
	if (!o)
		tb_oom();
	tb_task_dir(opts, tdir, sizeof(tdir));
	running_with_input(opts, tdir, &raw, o, 0);
	lock = lock_stdin(tdir);
	snprintf(path, sizeof(path), "%s/stdin.eof", tdir);
	if (access(path, F_OK) == 0)
		tb_refuse(TB_CLOSED, "the stdin of task %s was closed (eof)",
		          opts->id);
	fd = open_fifo(tdir, "stdin", opts->id);
	written = write_fifo(fd, data, n);
	close(fd);
	if (eof && written == n) {
		int control = open_fifo(tdir, "control", opts->id);
		int mark = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		if (mark < 0)
			tb_refuse(TB_INTERNAL, "internal error: %s: %s", path,
			          strerror(errno));
		close(mark);
		send_control(control, opts->id, "eof\n");
		closed = 1;
	}
	close(lock);
	tb_str_cstr(&out, "{\"task_id\":");
	tb_json_str(&out, opts->id, strlen(opts->id));
	tb_str_fmt(&out, ",\"written\":%zu,\"eof\":%s}", written,
	           closed ? "true" : "false");
	tb_say(&out);
	tb_str_free(&out);
	tb_str_free(&raw);
	free(o);
	return 0;
}

int tb_verb_resize(const struct tb_opts *opts)
{
	char tdir[TB_MAX_PATH + 64], line[64];
	struct tb_str raw = {0}, out = {0};
	struct tb_jobject *o;
	long long rows, cols;

	rows = tb_int_option("--rows", opts->rows, 1, 1000);
	cols = tb_int_option("--cols", opts->cols, 1, 1000);
	signal(SIGPIPE, SIG_IGN);
	o = malloc(sizeof(*o));
	if (!o)
		tb_oom();
	tb_task_dir(opts, tdir, sizeof(tdir));
	running_with_input(opts, tdir, &raw, o, 1);
	snprintf(line, sizeof(line), "resize %lld %lld\n", rows, cols);
	send_control(open_fifo(tdir, "control", opts->id), opts->id, line);
	tb_str_cstr(&out, "{\"task_id\":");
	tb_json_str(&out, opts->id, strlen(opts->id));
	tb_str_fmt(&out, ",\"rows\":%lld,\"cols\":%lld}", rows, cols);
	tb_say(&out);
	tb_str_free(&out);
	tb_str_free(&raw);
	free(o);
	return 0;
}
