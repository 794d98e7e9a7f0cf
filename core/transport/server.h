/* The stdio transport: newline-delimited JSON-RPC on two descriptors, one
 * client, one session for the life of the process. */
#ifndef TB_SERVER_H
#define TB_SERVER_H

#include <stdbool.h>

#include "transport/stop.h" /* tb_server_on_shutdown */

struct tb_serve_opts {
	int in_fd;        /* newline-delimited JSON-RPC in */
	int out_fd;       /* protocol messages out, nothing else */
	unsigned workers; /* size of the tools/call worker pool; 0 = default */
	bool test_tools;  /* list TB_TOOL_TEST_ONLY tools too */
};

/* Serves until EOF on in_fd, SIGTERM or SIGINT: finishes or cancels the
 * in-flight calls, ends the session (which destroys the sandboxes it
 * created and did not retain), runs the shutdown hooks (in reverse order
 * of registration), and returns 0; returns 1 when it could not start. */
int tb_serve(const struct tb_serve_opts *opts);

#endif /* TB_SERVER_H */
