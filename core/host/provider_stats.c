/* tb_provider_call_end (provider_stats.h): three metrics by op, registered
 * on first use. */
#include "config.h"

#include <time.h>

#include "base/metrics.h"
#include "host/provider_stats.h"
#include "taskbox/provider.h"

static const char *const ops[] = {
    "create",  "connect",    "exec",     "read_file", "write_file", "renew",
    "destroy", "read_files", "describe", "list",      NULL};
static const double seconds_buckets[] = {0.0001, 0.0005, 0.001, 0.005, 0.025,
                                         0.1,    0.5,    2.5,   10,    60};

static struct tb_metric calls =
    TB_COUNTER("taskbox_provider_calls_total",
               "Calls of provider plugin ops, by op.", "op", ops);
static struct tb_metric failures =
    TB_COUNTER("taskbox_provider_call_errors_total",
               "Provider plugin ops that did not return OK, by op.", "op", ops);
static struct tb_metric seconds = TB_HISTOGRAM(
    "taskbox_provider_call_seconds", "How long provider plugin ops took.", "op",
    ops, seconds_buckets, sizeof seconds_buckets / sizeof *seconds_buckets);

uint64_t tb_provider_call_start(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tb_provider_call_end(enum tb_provider_op op, uint64_t start, int status)
{
	tb_metric_register(&calls);
	tb_metric_register(&failures);
	tb_metric_register(&seconds);
	tb_metric_add(&calls, op, 1);
	if (status != TASKBOX_OK)
		tb_metric_add(&failures, op, 1);
	tb_metric_observe(&seconds, op,
	                  (double)(tb_provider_call_start() - start) / 1e9);
}
