/* What the in-sandbox supervisor writes and prints: its status record
 * (status.json, format 1), its error objects, and the /proc/PID/stat line
 * the host reads to check that a supervisor is still alive. Pure parsing;
 * every byte here came from the sandbox and is validated. */
#ifndef TB_SUP_RECORD_H
#define TB_SUP_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tasks/task_id.h"

enum tb_task_state {
	TB_TASK_RUNNING,
	TB_TASK_SUCCEEDED,
	TB_TASK_FAILED,
	TB_TASK_CANCELLED,
	TB_TASK_TIMED_OUT,
	TB_TASK_UNKNOWN, /* the host's verdict, never in a record */
};

/* "running", "succeeded", ... */
const char *tb_task_state_name(enum tb_task_state s);

static inline bool tb_task_state_terminal(enum tb_task_state s)
{
	return s != TB_TASK_RUNNING && s != TB_TASK_UNKNOWN;
}

/* A parsed status record. Strings point into json and live as long as it. */
struct tb_task_record {
	json_t *json; /* the whole record (owned) */
	enum tb_task_state state;
	char task_id[TB_TASK_ID_LEN + 1];
	const char *command; /* may be NULL */
	const char *error;   /* NULL when the record has none */
	int64_t started_at;  /* -1 when absent */
	int64_t finished_at; /* -1 while running */
	int64_t exit_code;   /* -1 while running */
	int64_t supervisor_pid;
	uint64_t supervisor_start;
	int64_t stdout_bytes, stderr_bytes;
	bool stdout_truncated, stderr_truncated;
	bool supervisor_gone;   /* set by the cancel verb, or by the host once
	                           it found the supervisor gone */
	bool existing;          /* start with a key found the key's task */
	const char *request;    /* with existing: the request digest kept with
	                           the key (key_request.h); NULL: none */
	const char *stdin_mode; /* "null", "pipe" or "tty" */
	const char *idempotency_key; /* NULL when none */
	const char *signal;          /* "SIGKILL", ...; NULL when none */
	const char *ended_by;        /* "exit", "timeout", "cancel"; NULL while
	                                running or in an older record */
};

/* The ended_by a view shows for a task in state: recorded (the record's
 * own, may be NULL) for a task that ended, else what the state implies
 * ("timeout", "cancel", "exit"); "supervisor_lost" for an unknown task
 * whose supervisor was found gone; NULL while running or when nothing is
 * known. */
const char *tb_task_ended_by(enum tb_task_state state, const char *recorded,
                             bool supervisor_gone);

/* Sets *s from a state's name ("running", ..., "unknown"). Returns 0, or -1
 * for an unknown name. */
int tb_task_state_parse(const char *name, enum tb_task_state *s);

/* Parses a record from text[0..len). expect_id (may be NULL) must equal its
 * task_id. On a broken rule writes the reason into err and returns -1. */
int tb_task_record_parse(const char *text, size_t len, const char *expect_id,
                         struct tb_task_record *rec, char *err, size_t errlen);

void tb_task_record_clear(struct tb_task_record *rec);

/* When text is the supervisor's {"error": "...", "code": "..."} object,
 * copies the message and code (truncating) and returns 0; else -1. */
int tb_sup_error_parse(const char *text, size_t len, char *msg, size_t msglen,
                       char *code, size_t codelen);

/* Reads field 22 (starttime) of a /proc/PID/stat line. The command name in
 * field 2 may hold spaces and parentheses, so fields are counted after the
 * last ')'. Returns 0, or -1 when the line is malformed. */
int tb_proc_stat_starttime(const char *line, size_t len, uint64_t *starttime);

/* Whether a /proc/PID/stat line shows the process that started at
 * starttime, still alive: 1 when its start time matches and it is not a
 * zombie or dead (state Z or X: a SIGKILLed supervisor stays a zombie, with
 * its start time, until something reaps it); 0 when not; -1 when the line
 * is malformed. */
int tb_proc_stat_is_live(const char *line, size_t len, uint64_t starttime);

/* How far (either way) a supervisor's heartbeat may be from the host's
 * clock and still prove it alive (docs/supervisor.md, liveness). */
#define TB_HEARTBEAT_TRUST_MS 3000

/* Whether a heartbeat file's text (the sandbox's clock in ms since the
 * epoch, digits and a newline) lies within TB_HEARTBEAT_TRUST_MS of now_ms:
 * 1 when it does, 0 when it is malformed or further off. */
int tb_heartbeat_fresh(const unsigned char *text, size_t len, int64_t now_ms);

#endif /* TB_SUP_RECORD_H */
