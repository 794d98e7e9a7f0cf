/* Tool calls and tasks, for /metrics (base/metrics.h). */
#ifndef TB_TOOL_STATS_H
#define TB_TOOL_STATS_H

#include <stdbool.h>
#include <stddef.h>

struct tb_tool_entry;

/* Names the tool registered at index i (the registry calls it). */
void tb_tool_stats_name(size_t i, const char *name);

/* Counts one call of e; is_error when its result had isError. */
void tb_tool_stats_call(const struct tb_tool_entry *e, bool is_error);

/* Counts a task started. */
void tb_tool_stats_task_started(void);

#endif /* TB_TOOL_STATS_H */
