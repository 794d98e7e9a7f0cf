/* Parsing of supervisor records and /proc stat lines. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tasks/sup_record.h"

static const char *const state_names[] = {
    [TB_TASK_RUNNING] = "running",     [TB_TASK_SUCCEEDED] = "succeeded",
    [TB_TASK_FAILED] = "failed",       [TB_TASK_CANCELLED] = "cancelled",
    [TB_TASK_TIMED_OUT] = "timed_out", [TB_TASK_UNKNOWN] = "unknown",
};

const char *tb_task_state_name(enum tb_task_state s)
{
	return state_names[s];
}

/* Reads an integer field that may be null (-> -1). Returns -1 on a wrong
 * type or a negative value. */
static int get_opt_int(json_t *obj, const char *key, int64_t *out, bool req)
{
	json_t *v = json_object_get(obj, key);

	*out = -1;
	if (v == NULL || json_is_null(v))
		return req ? -1 : 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (int64_t)json_integer_value(v);
	return 0;
}

static int get_bool(json_t *obj, const char *key, bool *out)
{
	json_t *v = json_object_get(obj, key);

	*out = false;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return -1;
	*out = json_is_true(v);
	return 0;
}

static const char *const stdin_modes[] = {"null", "pipe", "tty", NULL};
static const char *const ended_bys[] = {"exit", "timeout", "cancel", NULL};

/* Reads a string field that may be absent or null (-> NULL); with allowed
 * set, it must be one of them. Returns -1 on a wrong type or value. */
static int get_opt_str(json_t *obj, const char *key, const char *const *allowed,
                       const char **out)
{
	json_t *v = json_object_get(obj, key);
	size_t i;

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -1;
	*out = json_string_value(v);
	if (allowed == NULL)
		return 0;
	for (i = 0; allowed[i]; i++)
		if (strcmp(allowed[i], *out) == 0)
			return 0;
	return -1;
}

const char *tb_task_ended_by(enum tb_task_state state, const char *recorded,
                             bool supervisor_gone)
{
	switch (state) {
	case TB_TASK_RUNNING:
		return NULL;
	case TB_TASK_UNKNOWN:
		return supervisor_gone ? "supervisor_lost" : NULL;
	case TB_TASK_TIMED_OUT:
		return "timeout";
	case TB_TASK_CANCELLED:
		return "cancel";
	default:
		return recorded ? recorded : "exit";
	}
}

int tb_task_state_parse(const char *name, enum tb_task_state *s)
{
	int i;

	for (i = TB_TASK_RUNNING; i <= TB_TASK_UNKNOWN; i++)
		if (strcmp(name, state_names[i]) == 0) {
			*s = (enum tb_task_state)i;
			return 0;
		}
	return -1;
}

/* A record's state: any but "unknown", which is the host's verdict. */
static int parse_state(const char *name, enum tb_task_state *s)
{
	return tb_task_state_parse(name, s) == 0 && *s != TB_TASK_UNKNOWN ? 0
	                                                                  : -1;
}

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		goto fail;                                                     \
	} while (0)

int tb_task_record_parse(const char *text, size_t len, const char *expect_id,
                         struct tb_task_record *rec, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *j, *v;
	int64_t start;

	memset(rec, 0, sizeof(*rec));
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	rec->json = j;
	if (j == NULL || !json_is_object(j))
		FAIL("status record is not a JSON object (%s)",
		     j ? "wrong type" : jerr.text);
	v = json_object_get(j, "format");
	if (!json_is_integer(v) || json_integer_value(v) != 1)
		FAIL("status record: format must be 1");
	v = json_object_get(j, "task_id");
	if (!json_is_string(v) || !tb_task_id_valid(json_string_value(v)))
		FAIL("status record: task_id must be 32 lowercase hex");
	strcpy(rec->task_id, json_string_value(v));
	if (expect_id && strcmp(expect_id, rec->task_id) != 0)
		FAIL("status record: task_id %s is not the task asked for",
		     rec->task_id);
	v = json_object_get(j, "state");
	if (!json_is_string(v) ||
	    parse_state(json_string_value(v), &rec->state) < 0)
		FAIL("status record: state is not a known state");
	v = json_object_get(j, "command");
	rec->command = json_is_string(v) ? json_string_value(v) : NULL;
	v = json_object_get(j, "error");
	if (v && !json_is_null(v) && !json_is_string(v))
		FAIL("status record: error must be a string or null");
	rec->error = json_is_string(v) ? json_string_value(v) : NULL;
	if (get_opt_int(j, "started_at", &rec->started_at, false) < 0 ||
	    get_opt_int(j, "finished_at", &rec->finished_at, false) < 0 ||
	    get_opt_int(j, "exit_code", &rec->exit_code, false) < 0 ||
	    get_opt_int(j, "supervisor_pid", &rec->supervisor_pid, false) < 0 ||
	    get_opt_int(j, "supervisor_start", &start, false) < 0 ||
	    get_opt_int(j, "stdout_bytes", &rec->stdout_bytes, false) < 0 ||
	    get_opt_int(j, "stderr_bytes", &rec->stderr_bytes, false) < 0)
		FAIL("status record: a time, pid, size or exit code is not a "
		     "non-negative integer");
	rec->supervisor_start = start < 0 ? 0 : (uint64_t)start;
	if (get_bool(j, "stdout_truncated", &rec->stdout_truncated) < 0 ||
	    get_bool(j, "stderr_truncated", &rec->stderr_truncated) < 0 ||
	    get_bool(j, "supervisor_gone", &rec->supervisor_gone) < 0)
		FAIL("status record: a flag is not a boolean");
	if (get_bool(j, "existing", &rec->existing) < 0)
		FAIL("status record: a flag is not a boolean");
	if (get_opt_str(j, "stdin", stdin_modes, &rec->stdin_mode) < 0)
		FAIL("status record: stdin must be null, pipe or tty");
	if (rec->stdin_mode == NULL)
		rec->stdin_mode = "null";
	if (get_opt_str(j, "idempotency_key", NULL, &rec->idempotency_key) <
	        0 ||
	    get_opt_str(j, "signal", NULL, &rec->signal) < 0 ||
	    get_opt_str(j, "request", NULL, &rec->request) < 0)
		FAIL("status record: idempotency_key, signal and request must "
		     "be strings or null");
	if (get_opt_str(j, "ended_by", ended_bys, &rec->ended_by) < 0)
		FAIL("status record: ended_by must be exit, timeout, cancel "
		     "or null");
	if (rec->state == TB_TASK_RUNNING &&
	    (rec->supervisor_pid <= 0 || start < 0))
		FAIL("status record: a running task must name its supervisor "
		     "pid and start time");
	return 0;
fail:
	tb_task_record_clear(rec);
	return -1;
}

void tb_task_record_clear(struct tb_task_record *rec)
{
	json_decref(rec->json);
	memset(rec, 0, sizeof(*rec));
}

int tb_sup_error_parse(const char *text, size_t len, char *msg, size_t msglen,
                       char *code, size_t codelen)
{
	json_t *j = json_loadb(text, len, 0, NULL);
	json_t *e = json_object_get(j, "error");
	json_t *c = json_object_get(j, "code");
	int rc = -1;

	if (json_is_string(e)) {
		snprintf(msg, msglen, "%s", json_string_value(e));
		snprintf(code, codelen, "%s",
		         json_is_string(c) ? json_string_value(c) : "");
		rc = 0;
	}
	json_decref(j);
	return rc;
}

int tb_proc_stat_starttime(const char *line, size_t len, uint64_t *starttime)
{
	const char *p = NULL, *end = line + len;
	size_t i;
	int field;
	uint64_t v = 0;

	for (i = 0; i < len; i++)
		if (line[i] == ')')
			p = line + i;
	if (p == NULL)
		return -1;
	p++;
	/* Fields after ')' begin at field 3, each preceded by one space. */
	for (field = 3; field <= 22; field++) {
		if (p >= end || *p != ' ')
			return -1;
		p++;
		if (field < 22) {
			while (p < end && *p != ' ')
				p++;
			continue;
		}
		if (p >= end || *p < '0' || *p > '9')
			return -1;
		while (p < end && *p >= '0' && *p <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return -1;
			v = v * 10 + (uint64_t)(*p - '0');
			p++;
		}
		if (p < end && *p != ' ' && *p != '\n')
			return -1;
	}
	*starttime = v;
	return 0;
}

int tb_proc_stat_is_live(const char *line, size_t len, uint64_t starttime)
{
	const char *state = NULL;
	uint64_t got;
	size_t i;

	if (tb_proc_stat_starttime(line, len, &got) < 0)
		return -1;
	/* Field 3, the state, follows the last ')' and one space; the parse
	 * above has checked that both are there. */
	for (i = 0; i < len; i++)
		if (line[i] == ')')
			state = line + i + 2;
	if (*state == 'Z' || *state == 'X' || *state == 'x')
		return 0;
	return got == starttime;
}

int tb_heartbeat_fresh(const unsigned char *text, size_t len, int64_t now_ms)
{
	int64_t beat = 0;
	size_t i;

	/* At most 18 digits: no overflow, and far past any real clock. */
	if (len < 2 || len > 19 || text[len - 1] != '\n')
		return 0;
	for (i = 0; i + 1 < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return 0;
		beat = beat * 10 + (text[i] - '0');
	}
	return beat >= now_ms - TB_HEARTBEAT_TRUST_MS &&
	       beat <= now_ms + TB_HEARTBEAT_TRUST_MS;
}
