/* The input relay of a task started with --stdin pipe or tty: moves bytes
 * from the task's stdin FIFO to the command (the write end of its stdin
 * pipe, or the terminal's master) through a bounded buffer, in order and
 * never blocking, and applies the lines of the control FIFO
 * (docs/supervisor.md, Input and terminals). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup.h"

int tb_relay_fifos(int dfd, int *fifo, int *control)
{
	static const char *const names[] = {"stdin", "control"};
	int *fds[] = {fifo, control};

	for (int i = 0; i < 2; i++) {
		if (mkfifoat(dfd, names[i], 0600) < 0)
			return -1;
		*fds[i] =
		    openat(dfd, names[i], O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (*fds[i] < 0)
			return -1;
	}
	return 0;
}

void tb_relay_init(struct tb_relay *r, int fifo, int control, int target,
                   int tty)
{
	r->fifo = fifo;
	r->control = control;
	r->target = target;
	r->tty = tty;
	r->eof = r->done = r->broken = r->skipping = 0;
	r->active = target >= 0;
	r->off = r->len = r->line_len = 0;
}

void tb_relay_events(const struct tb_relay *r, struct pollfd *p)
{
	for (int i = 0; i < 3; i++)
		p[i] = (struct pollfd){.fd = -1};
	if (!r->active)
		return;
	p[0] = (struct pollfd){.fd = r->control, .events = POLLIN};
	if (r->off < r->len)
		p[2] = (struct pollfd){.fd = r->target, .events = POLLOUT};
	else if (!r->done)
		p[1] = (struct pollfd){.fd = r->fifo, .events = POLLIN};
}

void tb_relay_stop(struct tb_relay *r)
{
	if (!r->active)
		return;
	r->active = 0;
	r->off = r->len = 0;
	if (r->target >= 0)
		close(r->target);
	r->target = -1;
}

/* Writes the buffer once. Returns 1 when it is empty now (written, or
 * dropped because nobody reads), 0 when the target took no more. */
static int flush(struct tb_relay *r)
{
	ssize_t n = write(r->target, r->buf + r->off, r->len - r->off);

	if (n < 0 && errno == EINTR)
		return r->off >= r->len;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n < 0) {
		/* EPIPE (EIO on a terminal): the command's side is closed,
		 * so these bytes and all later ones are dropped. */
		r->broken = 1;
		r->off = r->len = 0;
		return 1;
	}
	r->off += (size_t)n;
	return r->off >= r->len;
}

/* eof, once the FIFO and the buffer are empty: closes the command's pipe,
 * or queues the terminal's end-of-file character. */
static void end_input(struct tb_relay *r)
{
	r->done = 1;
	if (!r->tty) {
		close(r->target);
		r->target = -1;
		r->active = 0;
		return;
	}
	if (!r->broken) {
		r->buf[0] = tb_pty_veof(r->target);
		r->off = 0;
		r->len = 1;
	}
}

int tb_relay_pump(struct tb_relay *r)
{
	while (r->active) {
		ssize_t n;

		if (r->off < r->len) {
			if (!flush(r))
				return 0; /* the target is full: POLLOUT */
			continue;
		}
		if (r->done)
			return 0;
		n = read(r->fifo, r->buf, sizeof(r->buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (n > 0) {
			r->off = 0;
			r->len = r->broken ? 0 : (size_t)n;
			continue;
		}
		if (r->eof)
			end_input(r);
		else
			return 0;
	}
	return 0;
}

/* A decimal from 1 to 1000 in P (n bytes), or -1. */
static int size_word(const char *p, size_t n)
{
	int v = 0;

	if (n < 1 || n > 4)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v >= 1 && v <= 1000 ? v : -1;
}

/* Applies one control line (without its newline); others are ignored. */
static void apply(struct tb_relay *r, const char *line, size_t n)
{
	static const char space[] = " \t\r\v\f";
	const char *word[4];
	size_t len[4], words = 0, i = 0;
	int rows, cols;

	while (i < n && words < 4) {
		while (i < n && memchr(space, line[i], sizeof(space) - 1))
			i++;
		if (i >= n)
			break;
		word[words] = line + i;
		while (i < n && !memchr(space, line[i], sizeof(space) - 1))
			i++;
		len[words] = (size_t)(line + i - word[words]);
		words++;
	}
	if (words == 1 && len[0] == 3 && memcmp(word[0], "eof", 3) == 0) {
		r->eof = 1;
		return;
	}
	if (words != 3 || !r->tty || len[0] != 6 ||
	    memcmp(word[0], "resize", 6) != 0)
		return;
	rows = size_word(word[1], len[1]);
	cols = size_word(word[2], len[2]);
	if (rows > 0 && cols > 0 && r->target >= 0)
		tb_pty_resize(r->target, rows, cols);
}

int tb_relay_control(struct tb_relay *r)
{
	char data[4096];
	ssize_t n;

	do
		n = read(r->control, data, sizeof(data));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	for (ssize_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			if (!r->skipping)
				apply(r, r->line, r->line_len);
			r->skipping = 0;
			r->line_len = 0;
		} else if (r->skipping) {
			continue;
		} else if (r->line_len == TB_MAX_CONTROL_LINE) {
			r->skipping = 1; /* no valid line is this long */
			r->line_len = 0;
		} else {
			r->line[r->line_len++] = data[i];
		}
	}
	return 0;
}
