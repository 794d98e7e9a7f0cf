/* The tasks module's start and end: its tools, the operator's mask
 * values, and the process-wide caches of the tasks layer. */
#include "config.h"

#include "host/config_file.h"
#include "tasks/host_mask.h"
#include "base/error_json.h"
#include "base/log.h"
#include "tasks/dir_watch.h"
#include "tasks/pid_watch.h"
#include "tasks/quota.h"
#include "tasks/record_cache.h"
#include "tasks/remote_watch.h"
#include "tools/tasks.h"

static struct tb_mask *mask;

/* Error bodies mask the operator's values too (base/error_json.h). */
static int mask_error(const unsigned char *in, size_t len, unsigned char **out,
                      size_t *outlen)
{
	return tb_mask_apply(tb_mask_operator(), in, len, out, outlen);
}

void tb_tasks_fini(void)
{
	tb_error_json_set_filter(NULL);
	tb_mask_set_operator(NULL);
	tb_quota_set(NULL);
	tb_mask_free(mask);
	mask = NULL;
	tb_remote_watch_drain();
	tb_dir_watch_stop();
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
	tb_mask_set_operator(mask);
	tb_error_json_set_filter(mask_error);
	tb_quota_set(cfg->limits);
	if (tb_sandbox_tools_register() < 0 || tb_task_tools_register() < 0 ||
	    tb_run_tool_register() < 0 || tb_file_tools_register() < 0 ||
	    tb_list_tasks_tool_register() < 0 ||
	    tb_list_sandboxes_tool_register() < 0 ||
	    tb_task_backend_register() < 0 ||
	    tb_task_input_tools_register() < 0)
		return -1;
	return 0;
}
