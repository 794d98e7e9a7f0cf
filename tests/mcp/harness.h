/* A session without stdio for the unit tests: lines in, parsed messages
 * out. */
#ifndef TB_TEST_MCP_HARNESS_H
#define TB_TEST_MCP_HARNESS_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "protocol/mcp.h"

struct harness {
	struct tb_mcp *session;
	struct tb_workers *pool;
	pthread_mutex_t lock;
	pthread_cond_t more;
	json_t *out; /* every message written, in order */
	size_t taken;
};

/* Registers the fixture tools and opens a session; workers == 0 runs
 * calls inline. */
void harness_open(struct harness *h, unsigned workers, unsigned queue,
                  bool test_tools);
void harness_close(struct harness *h);

/* Sends one line (printf-style). */
void harness_send(struct harness *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sends initialize for version and takes its answer. */
void harness_init(struct harness *h, const char *version);

/* The next message written, waiting up to 5 s; NULL when none came. The
 * harness keeps ownership. */
json_t *harness_next(struct harness *h);

/* Messages written and not yet taken. */
size_t harness_pending(struct harness *h);

/* Waits for the answer to id (an integer), skipping notifications, which
 * are counted in *notes when notes is set. */
json_t *harness_answer(struct harness *h, json_int_t id, int *notes);

#endif
