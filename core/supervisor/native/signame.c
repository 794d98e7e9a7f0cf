/* The signal names of docs/supervisor.md (Signal names): a fixed table, so
 * that both implementations and every libc spell them alike. */
#include "config.h"

#include <stdio.h>

#include "sup.h"

static const char *const names[] = {
    "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",    "SIGTRAP", "SIGABRT",
    "SIGBUS",  "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",
    "SIGPIPE", "SIGALRM",   "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT",
    "SIGSTOP", "SIGTSTP",   "SIGTTIN", "SIGTTOU",   "SIGURG",  "SIGXCPU",
    "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",  "SIGIO",   "SIGPWR",
    "SIGSYS"};

const char *tb_signal_name(int sig, char *buf, size_t len)
{
	if (sig >= 1 && (size_t)sig <= sizeof(names) / sizeof(names[0]))
		return names[sig - 1];
	snprintf(buf, len, "SIG%d", sig);
	return buf;
}
