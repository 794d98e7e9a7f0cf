/* The stop signals and shutdown hooks of stop.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/audit.h"
#include "base/log.h"
#include "transport/stop.h"

#define MAX_HOOKS 32

static void (*hooks[MAX_HOOKS])(void);
static unsigned nhooks;

static int signal_pipe[2] = {-1, -1};
static volatile sig_atomic_t stop_signal;

void tb_server_on_shutdown(void (*fn)(void))
{
	if (nhooks < MAX_HOOKS)
		hooks[nhooks++] = fn;
	else
		tb_log(TB_LOG_ERROR, "too many shutdown hooks; one dropped");
}

void tb_stop_run_hooks(void)
{
	while (nhooks > 0)
		hooks[--nhooks]();
}

static void on_signal(int sig)
{
	int saved = errno;
	stop_signal = sig;
	if (write(signal_pipe[1], "x", 1) < 0) {
		/* the pipe is full: a wake-up is already pending */
	}
	errno = saved;
}

/* SIGHUP: the audit trail's file is opened again by its path (after
 * logrotate moved it). */
static void on_hangup(int sig)
{
	(void)sig;
	tb_audit_reopen_soon();
}

int tb_stop_install(struct tb_stop_saved *old)
{
	struct sigaction sa;

	if (pipe(signal_pipe) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		fcntl(signal_pipe[i], F_SETFL, O_NONBLOCK);
		fcntl(signal_pipe[i], F_SETFD, FD_CLOEXEC);
	}
	stop_signal = 0;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, &old->term);
	sigaction(SIGINT, &sa, &old->intr);
	sa.sa_handler = on_hangup;
	sigaction(SIGHUP, &sa, &old->hup);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old->pipe);
	return 0;
}

void tb_stop_restore(const struct tb_stop_saved *old)
{
	sigaction(SIGHUP, &old->hup, NULL);
	sigaction(SIGTERM, &old->term, NULL);
	sigaction(SIGINT, &old->intr, NULL);
	sigaction(SIGPIPE, &old->pipe, NULL);
	close(signal_pipe[0]);
	close(signal_pipe[1]);
	signal_pipe[0] = signal_pipe[1] = -1;
}

int tb_stop_fd(void)
{
	return signal_pipe[0];
}

int tb_stop_signal(void)
{
	return stop_signal;
}
