/* The server's tool modules, started in one place: each module adds one
 * line here. */
#include "config.h"

#include "cli/modules.h"
#include "tools/tasks.h"
#include "tools/test_tools.h"

int tb_modules_init(const struct tb_config *cfg, bool test_tools)
{
	(void)cfg;
	(void)test_tools;
	if (tb_tasks_init(cfg) < 0)
		return -1;
	if (test_tools && tb_test_tools_register() < 0)
		return -1;
	return 0;
}

void tb_modules_fini(void)
{
	tb_tasks_fini();
}
