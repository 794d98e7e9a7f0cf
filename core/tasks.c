/* The tasks module's start: tools, mask values, session cleanup. */
#include "config.h"

#include "config_file.h"
#include "host_mask.h"
#include "log.h"
#include "pid_watch.h"
#include "record_cache.h"
#include "server.h"
#include "session.h"
#include "tasks.h"

static struct tb_mask *mask;

const struct tb_mask *tb_tasks_mask(void)
{
	return mask;
}

static void tasks_shutdown(void)
{
	tb_session_shutdown();
	tb_mask_free(mask);
	mask = NULL;
	tb_record_cache_clear();
	tb_pid_watch_clear();
}

int tb_tasks_init(const struct tb_config *cfg)
{
	mask = tb_mask_new((const char *const *)cfg->mask_values,
	                   cfg->n_mask_values);
	if (mask == NULL) {
		tb_log(TB_LOG_ERROR, "tasks: out of memory");
		return -1;
	}
	if (tb_sandbox_tools_register() < 0 || tb_task_tools_register() < 0 ||
	    tb_run_tool_register() < 0 || tb_file_tools_register() < 0 ||
	    tb_list_tasks_tool_register() < 0 || tb_task_backend_register() < 0)
		return -1;
	tb_server_on_shutdown(tasks_shutdown);
	return 0;
}
