/* The pseudo-terminal of a task started with --stdin tty: the pair, its
 * window size and its end-of-file character. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "sup.h"

int tb_pty_resize(int master, int rows, int cols)
{
	struct winsize ws = {0};

	ws.ws_row = (unsigned short)rows;
	ws.ws_col = (unsigned short)cols;
	return ioctl(master, TIOCSWINSZ, &ws);
}

int tb_pty_open(int rows, int cols, int *master, int *slave)
{
	char name[128];
	int m, s, saved, rc;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return -1;
	if (grantpt(m) < 0 || unlockpt(m) < 0)
		goto fail;
	rc = ptsname_r(m, name, sizeof(name));
	if (rc != 0) {
		errno = rc;
		goto fail;
	}
	s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		goto fail;
	if (tb_pty_resize(m, rows, cols) < 0 ||
	    fcntl(m, F_SETFL, O_NONBLOCK) < 0) {
		saved = errno;
		close(s);
		errno = saved;
		goto fail;
	}
	*master = m;
	*slave = s;
	return 0;
fail:
	saved = errno;
	close(m);
	errno = saved;
	return -1;
}

unsigned char tb_pty_veof(int master)
{
	struct termios t;

	if (tcgetattr(master, &t) < 0 || t.c_cc[VEOF] == 0)
		return 4; /* ^D */
	return t.c_cc[VEOF];
}
