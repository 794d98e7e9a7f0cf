/* JSON Schema fragments the task tools share. */
#ifndef TB_TASK_SCHEMAS_H
#define TB_TASK_SCHEMAS_H

#include "host/sandbox_ref.h"

#define SANDBOX_ID_SCHEMA                                                      \
	"{\"type\":\"string\",\"minLength\":3,\"maxLength\":160,"              \
	"\"pattern\":\"" TB_SANDBOX_ID_PATTERN "\","                           \
	"\"description\":\"The sandbox, as create_sandbox returned it.\"}"
/* 32 lowercase hex digits; the length is in minLength/maxLength because a
 * bounded repetition costs regexec 10-20 us a match. */
#define TASK_ID_SCHEMA                                                         \
	"{\"type\":\"string\",\"minLength\":32,\"maxLength\":32,"              \
	"\"pattern\":\"^[0-9a-f]+$\","                                         \
	"\"description\":\"The task id start_task returned.\"}"
#define STATE_SCHEMA                                                           \
	"{\"type\":\"string\",\"enum\":[\"running\",\"succeeded\","            \
	"\"failed\",\"cancelled\",\"timed_out\",\"unknown\"]}"

#endif /* TB_TASK_SCHEMAS_H */
