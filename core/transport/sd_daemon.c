/* tb_sd_listen_fd, tb_sd_notify (sd_daemon.h): libsystemd's sd-daemon
 * functions, loaded by the soname found at build time the first time a
 * service manager's variable asks for them. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <systemd/sd-daemon.h>

#include "base/lazy_lib.h"
#include "base/log.h"
#include "transport/sd_daemon.h"

static struct {
	__typeof__(sd_listen_fds) *listen_fds;
	__typeof__(sd_is_socket) *is_socket;
	__typeof__(sd_notify) *notify;
} sd;

static const struct tb_lazy_sym syms[] = {
    {"sd_listen_fds", &sd.listen_fds},
    {"sd_is_socket", &sd.is_socket},
    {"sd_notify", &sd.notify},
};

static struct tb_lazy_lib lib = TB_LAZY_LIB_INIT(TB_SYSTEMD_SONAME, syms);

/* Loads libsystemd once; returns 0, or -1 with why. */
static int sd_load(char *why, size_t whylen)
{
	return tb_lazy_lib_load(&lib, why, whylen);
}

/* The numeric address and port fd is bound to; 0, or -1 with why. */
static int bound_addr(int fd, struct tb_listen_addr *addr, char *why,
                      size_t whylen)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	const void *ip;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		snprintf(why, whylen, "getsockname: %s", strerror(errno));
		return -1;
	}
	memset(addr, 0, sizeof *addr);
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 =
		    (const struct sockaddr_in6 *)&ss;
		ip = &s6->sin6_addr;
		addr->port = ntohs(s6->sin6_port);
		addr->ipv6 = true;
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
		ip = &s4->sin_addr;
		addr->port = ntohs(s4->sin_port);
	}
	inet_ntop(ss.ss_family, ip, addr->addr, sizeof addr->addr);
	return 0;
}

int tb_sd_listen_fd(struct tb_listen_addr *addr, char *why, size_t whylen)
{
	char lwhy[160];
	int n, fd = SD_LISTEN_FDS_START;

	if (!getenv("LISTEN_FDS"))
		return 0;
	if (sd_load(lwhy, sizeof lwhy) < 0) {
		snprintf(why, whylen, "LISTEN_FDS: cannot load libsystemd: %s",
		         lwhy);
		return -1;
	}
	/* 1: the variables leave the environment whatever the answer. */
	n = sd.listen_fds(1);
	if (n == 0)
		return 0; /* meant for another process (LISTEN_PID) */
	if (n < 0) {
		snprintf(why, whylen, "LISTEN_FDS: %s", strerror(-n));
		return -1;
	}
	if (n > 1) {
		snprintf(why, whylen,
		         "LISTEN_FDS: %d sockets passed, taskbox serves one",
		         n);
		return -1;
	}
	if (sd.is_socket(fd, AF_INET, SOCK_STREAM, 1) <= 0 &&
	    sd.is_socket(fd, AF_INET6, SOCK_STREAM, 1) <= 0) {
		snprintf(why, whylen,
		         "LISTEN_FDS: descriptor %d is not a listening TCP "
		         "socket (ListenStream= takes [ADDR:]PORT)",
		         fd);
		return -1;
	}
	if (bound_addr(fd, addr, why, whylen) < 0)
		return -1;
	/* Handed over without close-on-exec: no command may inherit it. */
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		snprintf(why, whylen, "LISTEN_FDS: fcntl: %s", strerror(errno));
		return -1;
	}
	return fd;
}

void tb_sd_notify(const char *state)
{
	char why[160];
	int rc;

	if (!getenv("NOTIFY_SOCKET"))
		return;
	if (sd_load(why, sizeof why) < 0) {
		tb_log(TB_LOG_WARN, "NOTIFY_SOCKET: cannot load libsystemd: %s",
		       why);
		return;
	}
	rc = sd.notify(0, state);
	if (rc < 0)
		tb_log(TB_LOG_WARN, "sd_notify(%s): %s", state, strerror(-rc));
}
