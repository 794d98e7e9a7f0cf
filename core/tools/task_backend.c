/* The MCP tasks backend the tools layer offers the protocol layer. */
#include "config.h"

#include "tools/task_backend.h"

static const struct tb_task_backend *backend;

void tb_task_backend_set(const struct tb_task_backend *b)
{
	backend = b;
}

const struct tb_task_backend *tb_task_backend_get(void)
{
	return backend;
}
