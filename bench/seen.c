/* The moment a task's end becomes visible, for the remote wake-up figure:
 * `bench-seen DIR NAME` watches DIR, prints "ready" once the watch is in
 * place, then, when a file named NAME is renamed into DIR (the supervisor
 * puts a status record in place so), the wall clock (CLOCK_REALTIME, as
 * bench/stamp.c) in ns since the epoch and a newline; every rename, until
 * its standard input closes. A file's ctime cannot serve: the kernel stamps
 * inodes with a clock that moves once a tick. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_REALTIME */

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

/* Prints the wall clock now; 0, or -1 when it cannot. */
static int print_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	return printf("%lld%09ld\n", (long long)ts.tv_sec, ts.tv_nsec) > 0 &&
	               fflush(stdout) == 0
	           ? 0
	           : -1;
}

int main(int argc, char **argv)
{
	_Alignas(struct inotify_event) char buf[4096];
	struct pollfd pfd[2];
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-seen DIR NAME\n");
		return 2;
	}
	fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, argv[1], IN_MOVED_TO) < 0) {
		perror(argv[1]);
		return 1;
	}
	if (printf("ready\n") < 0 || fflush(stdout) != 0)
		return 1;
	pfd[0] = (struct pollfd){.fd = fd, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = 0, .events = POLLIN};
	for (;;) {
		if (poll(pfd, 2, -1) < 0)
			return 1;
		if (pfd[1].revents)
			return 0; /* the bench is done with it */
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0)
			return 1;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;

			if (ev->len && strcmp(ev->name, argv[2]) == 0 &&
			    print_now() < 0)
				return 1;
			p += sizeof *ev + ev->len;
		}
	}
}
