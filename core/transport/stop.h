/* How a transport stops, shared by stdio and HTTP: SIGTERM and SIGINT
 * write to a self-pipe the serving loop polls, SIGHUP reopens the audit
 * trail, SIGPIPE is ignored, and the shutdown hooks run once serving has
 * ended. */
#ifndef TB_STOP_H
#define TB_STOP_H

#include <signal.h>

struct tb_stop_saved {
	struct sigaction term, intr, pipe, hup;
};

/* Installs the handlers (saving the old ones in old). Returns 0, or -1
 * with errno set. */
int tb_stop_install(struct tb_stop_saved *old);

/* Puts the old handlers back and closes the pipe. */
void tb_stop_restore(const struct tb_stop_saved *old);

/* The pipe's read end: readable once a stop signal came. */
int tb_stop_fd(void);

/* The stop signal received, or 0. Async-signal-safe to read. */
int tb_stop_signal(void);

/* Adds a hook run once when serving ends, after the sessions' end. Call
 * before serving; not thread-safe. */
void tb_server_on_shutdown(void (*fn)(void));

/* Runs the hooks in reverse order of registration and forgets them. */
void tb_stop_run_hooks(void);

#endif /* TB_STOP_H */
