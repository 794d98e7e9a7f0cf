/* One output stream of the command: its pipe (or a terminal's master) and
 * its capped log. The first TB_LOG_CAP masked bytes are kept; the rest is
 * read and discarded. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sup.h"

/* Reads land here; past the cap, a whole 1 MiB pipe is read at once. */
static unsigned char buffer[TB_LOG_CAP];

void tb_stream_init(struct tb_stream *st, int fd, int log,
                    const struct tb_secrets *s)
{
	memset(st, 0, sizeof(*st));
	st->fd = fd;
	st->log = log;
	st->open = fd >= 0; /* a terminal's stderr has no pipe */
	st->splicing = 1;
	st->masking = s->n > 0;
	if (st->masking)
		tb_masker_init(&st->masker, s);
}

/* Appends masked bytes to the log up to the cap. */
static int keep(struct tb_stream *st, const unsigned char *p, size_t n)
{
	size_t room = TB_LOG_CAP - st->kept;

	if (n > room) {
		st->truncated = 1;
		n = room;
	}
	if (n && tb_write_all(st->log, p, n) < 0)
		return -1;
	st->kept += n;
	return 0;
}

/* Past the cap: the pipe grows to 1 MiB only now, as pipe memory counts
 * against a per-user limit that idle tasks should not use up. */
static void start_discarding(struct tb_stream *st)
{
	if (fcntl(st->fd, F_SETPIPE_SZ, TB_LOG_CAP) >= 0)
		st->big = 1;
}

/* Past the cap the bytes only have to leave the pipe: splice(2) hands
 * them to /dev/null, whose kernel side drops them without a copy to user
 * space (that copy was a third of a fast writer's drain). Returns the bytes
 * dropped, 0 at end of file, or -1 with errno (EAGAIN: none waiting; any
 * other: splice cannot serve here, and the caller reads instead). */
static ssize_t discard_by_splice(struct tb_stream *st)
{
	static int devnull = -1;
	ssize_t n;

	if (devnull < 0)
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0)
		return -1;
	do
		n = splice(st->fd, NULL, devnull, NULL, TB_LOG_CAP,
		           SPLICE_F_NONBLOCK);
	while (n < 0 && errno == EINTR);
	return n;
}

ssize_t tb_stream_read(struct tb_stream *st)
{
	const unsigned char *out = buffer;
	int discarding = st->kept >= TB_LOG_CAP;
	size_t len;
	ssize_t n;

	if (!st->open)
		return 0;
	if (discarding && !st->discarding) {
		st->discarding = 1;
		start_discarding(st);
	}
	if (discarding && st->splicing) {
		n = discard_by_splice(st);
		if (n > 0) {
			st->truncated = 1;
			return n;
		}
		if (n == 0)
			return tb_stream_close(st) < 0 ? -1 : 0;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		st->splicing = 0; /* read from now on */
	}
	do
		n = read(st->fd, buffer,
		         discarding ? sizeof(buffer) : TB_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	/* EIO: a terminal's master once no slave is left open. */
	if (n < 0 && errno != EIO)
		return -1;
	if (n <= 0)
		return tb_stream_close(st) < 0 ? -1 : 0;
	if (discarding) {
		st->truncated = 1;
		return n;
	}
	len = (size_t)n;
	if (st->masking)
		len = tb_mask_feed(&st->masker, buffer, len, 0, &out);
	return keep(st, out, len) < 0 ? -1 : n;
}

int tb_stream_close(struct tb_stream *st)
{
	const unsigned char *out;
	size_t len;
	int rc = 0;

	if (!st->open)
		return 0;
	st->open = 0;
	close(st->fd);
	st->fd = -1;
	if (st->masking && st->kept < TB_LOG_CAP) {
		len = tb_mask_feed(&st->masker, NULL, 0, 1, &out);
		rc = keep(st, out, len);
	} else if (st->masking && st->masker.held) {
		st->truncated = 1;
	}
	return rc;
}

void tb_stream_free(struct tb_stream *st)
{
	if (st->masking)
		tb_masker_free(&st->masker);
	st->masking = 0;
}
