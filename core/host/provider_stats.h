/* The provider calls behind every tool, for /metrics (base/metrics.h):
 * how many of each op, how many failed, and how long they took. */
#ifndef TB_PROVIDER_STATS_H
#define TB_PROVIDER_STATS_H

#include <stdint.h>

enum tb_provider_op {
	TB_POP_CREATE,
	TB_POP_CONNECT,
	TB_POP_EXEC,
	TB_POP_READ_FILE,
	TB_POP_WRITE_FILE,
	TB_POP_RENEW,
	TB_POP_DESTROY,
	TB_POP_READ_FILES,
	TB_POP_DESCRIBE,
	TB_POP_LIST,
};

/* The clock at the start of a provider call. */
uint64_t tb_provider_call_start(void);

/* Counts a call of op that began at start and returned status (a
 * taskbox_status). */
void tb_provider_call_end(enum tb_provider_op op, uint64_t start, int status);

#endif /* TB_PROVIDER_STATS_H */
