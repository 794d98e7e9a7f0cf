/* The protocol's metrics (base/metrics.h): requests and their JSON-RPC
 * errors by method, calls in flight, calls parked. */
#ifndef TB_MCP_STATS_H
#define TB_MCP_STATS_H

#include <jansson.h>

/* The label of a request method (the known ones, else "other"). */
unsigned tb_mcp_stats_method(const char *method);

/* Counts a request of method label m. */
void tb_mcp_stats_request(unsigned m);

/* Counts msg, an answer to a request of method label m, when it is a
 * JSON-RPC error. */
void tb_mcp_stats_answer(unsigned m, json_t *msg);

/* Moves the gauges of calls in flight and of parked calls. */
void tb_mcp_stats_inflight(int delta);
void tb_mcp_stats_parked(int delta);

#endif /* TB_MCP_STATS_H */
