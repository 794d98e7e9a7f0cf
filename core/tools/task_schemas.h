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

/* The input fields every task view shows (start, get, cancel, list). */
#define TASK_INPUT_PROPS                                                       \
	"\"stdin\":{\"type\":\"string\",\"enum\":[\"null\",\"pipe\","          \
	"\"tty\"]},"                                                           \
	"\"idempotency_key\":{\"type\":[\"string\",\"null\"]},"                \
	"\"signal\":{\"type\":[\"string\",\"null\"]},"                         \
	"\"ended_by\":{\"type\":[\"string\",\"null\"],\"enum\":[\"exit\","     \
	"\"timeout\",\"cancel\",\"sandbox_expired\",\"supervisor_lost\","      \
	"null]}"
#define TASK_INPUT_NAMES "\"stdin\",\"idempotency_key\",\"signal\",\"ended_by\""

/* start_task's input options (tools/task_input.c reads them). */
#define START_INPUT_PROPS                                                      \
	"\"stdin\":{\"type\":\"string\",\"enum\":[\"null\",\"pipe\"],"         \
	"\"default\":\"null\",\"description\":\"null: the command reads "      \
	"/dev/null. pipe: its stdin stays open for write_task, from any "      \
	"server process, until write_task sends eof.\"},"                      \
	"\"tty\":{\"type\":\"boolean\",\"default\":false,\"description\":"     \
	"\"Run the command on a pseudo-terminal: stdout carries the "          \
	"terminal's stream (echo included), stderr stays empty; write_task "   \
	"types into it, resize_task sizes it.\"},"                             \
	"\"rows\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,"       \
	"\"default\":24,\"description\":\"The terminal's rows (tty "           \
	"only).\"},"                                                           \
	"\"cols\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,"       \
	"\"default\":80,\"description\":\"The terminal's columns (tty "        \
	"only).\"},"                                                           \
	"\"idempotency_key\":{\"type\":\"string\",\"minLength\":1,"            \
	"\"maxLength\":128,\"pattern\":\"^[A-Za-z0-9_.-]+$\","                 \
	"\"description\":\"Makes the start happen once: a later start with "   \
	"the same key in the same sandbox, from any server process, returns "  \
	"the first task (reused: true) instead of starting another. Use it "   \
	"to retry a start whose answer was lost. A key used for another "      \
	"request (command, cwd, timeout, stdin or tty) is an error that "      \
	"names what differs.\"}"

#endif /* TB_TASK_SCHEMAS_H */
