/* mcp_stats.h: counters by method and two gauges, registered on the first
 * request. */
#include "config.h"

#include <string.h>

#include "base/metrics.h"
#include "protocol/mcp_stats.h"

static const char *const methods[] = {
    "initialize",   "ping",       "tools/list",   "tools/call", "tasks/get",
    "tasks/result", "tasks/list", "tasks/cancel", "other",      NULL};
#define OTHER 8

static struct tb_metric requests =
    TB_COUNTER("taskbox_mcp_requests_total",
               "JSON-RPC requests received, by method.", "method", methods);
static struct tb_metric errors = TB_COUNTER(
    "taskbox_mcp_request_errors_total",
    "Requests answered with a JSON-RPC error, by method.", "method", methods);
static struct tb_metric inflight =
    TB_GAUGE("taskbox_calls_in_flight",
             "tools/call and tasks/* requests being served (parked "
             "included).",
             NULL, NULL);
static struct tb_metric parked =
    TB_GAUGE("taskbox_calls_parked", "Waiting calls parked without a thread.",
             NULL, NULL);

unsigned tb_mcp_stats_method(const char *method)
{
	for (unsigned i = 0; i < OTHER; i++)
		if (method && strcmp(method, methods[i]) == 0)
			return i;
	return OTHER;
}

void tb_mcp_stats_request(unsigned m)
{
	tb_metric_register(&requests);
	tb_metric_register(&errors);
	tb_metric_register(&inflight);
	tb_metric_register(&parked);
	tb_metric_add(&requests, m, 1);
}

void tb_mcp_stats_answer(unsigned m, json_t *msg)
{
	if (json_object_get(msg, "error"))
		tb_metric_add(&errors, m, 1);
}

void tb_mcp_stats_inflight(int delta)
{
	tb_metric_add(&inflight, 0, delta);
}

void tb_mcp_stats_parked(int delta)
{
	tb_metric_add(&parked, 0, delta);
}
