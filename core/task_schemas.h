/* JSON Schema fragments the task tools share. */
#ifndef TB_TASK_SCHEMAS_H
#define TB_TASK_SCHEMAS_H

#include "sandbox_ref.h"

#define SANDBOX_ID_SCHEMA                                                      \
	"{\"type\":\"string\",\"minLength\":3,\"maxLength\":160,"              \
	"\"pattern\":\"" TB_SANDBOX_ID_PATTERN "\","                           \
	"\"description\":\"The sandbox, as create_sandbox returned it.\"}"
#define TASK_ID_SCHEMA                                                         \
	"{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\","                 \
	"\"description\":\"The task id start_task returned.\"}"
#define STATE_SCHEMA                                                           \
	"{\"type\":\"string\",\"enum\":[\"running\",\"succeeded\","            \
	"\"failed\",\"cancelled\",\"timed_out\",\"unknown\"]}"

#endif /* TB_TASK_SCHEMAS_H */
