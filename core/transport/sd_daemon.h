/* The service manager's protocols, through libsystemd (sd-daemon(3)):
 * a listening socket handed over by socket activation (LISTEN_FDS, from
 * systemd or any supervisor that speaks it) and readiness and stopping
 * notices (NOTIFY_SOCKET). The library is loaded only when one of those
 * variables is set, so a server started by hand or on stdio never maps
 * it. */
#ifndef TB_SD_DAEMON_H
#define TB_SD_DAEMON_H

#include <stddef.h>

#include "base/listen_addr.h"

/* Takes the listening socket passed to this process, if any, and removes
 * LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES from the environment (no
 * command the server starts inherits them). Returns the descriptor with
 * its address in *addr, 0 when none was passed, or -1 with why (more than
 * one socket, not a listening TCP socket, libsystemd missing). */
int tb_sd_listen_fd(struct tb_listen_addr *addr, char *why, size_t whylen);

/* Tells the service manager state ("READY=1", "STOPPING=1"); does nothing
 * when no NOTIFY_SOCKET is set. Failures are logged, never fatal. */
void tb_sd_notify(const char *state);

#endif /* TB_SD_DAEMON_H */
