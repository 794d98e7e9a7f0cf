/* tool_stats.h: counters labelled by tool name, the names filled in as the
 * tools register (up to TB_METRIC_MAX_LABELS; later ones go uncounted). */
#include "config.h"

#include "base/metrics.h"
#include "tools/tool_stats.h"
#include "tools/tools_registry.h"

static const char *names[TB_METRIC_MAX_LABELS + 1];

static struct tb_metric calls =
    TB_COUNTER("taskbox_tool_calls_total", "tools/call requests run, by tool.",
               "tool", names);
static struct tb_metric errors =
    TB_COUNTER("taskbox_tool_errors_total",
               "tools/call results with isError, by tool.", "tool", names);
static struct tb_metric tasks =
    TB_COUNTER("taskbox_tasks_started_total",
               "Tasks started (start_task, and tools "
               "run as MCP tasks).",
               NULL, NULL);

void tb_tool_stats_name(size_t i, const char *name)
{
	if (i < TB_METRIC_MAX_LABELS)
		names[i] = name;
	tb_metric_register(&calls);
	tb_metric_register(&errors);
	tb_metric_register(&tasks);
}

void tb_tool_stats_call(const struct tb_tool_entry *e, bool is_error)
{
	tb_metric_add(&calls, (unsigned)e->index, 1);
	if (is_error)
		tb_metric_add(&errors, (unsigned)e->index, 1);
}

void tb_tool_stats_task_started(void)
{
	tb_metric_add(&tasks, 0, 1);
}
