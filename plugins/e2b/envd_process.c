/* exec through envd: POST /process.Process/Start as a Connect server stream
 * (application/connect+json). The request is one envelope holding a
 * StartRequest; the answer is decoded by process_stream.c. The timeout is
 * enforced here: at the
 * deadline the process is killed through SendSignal; Connect-Timeout-Ms
 * asks envd to do the same a little later should this side be gone. A
 * process is killed by the pid envd's start event brings: a cancel or a
 * deadline before that event keeps the stream until it comes, for at most
 * TB_EXEC_PID_WAIT_MS, so that a process envd started meanwhile is not
 * left running. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "e2b_int.h"

#define TB_EXEC_GRACE_MS 2000u /* to collect the end after a kill */
#define TB_EXEC_SERVER_SLACK_MS 2000u
#define TB_KILL_TIMEOUT_MS 5000u
#define TB_EXEC_PID_WAIT_MS 5000u /* for the start event, to kill by pid */

struct exec_state {
	struct tb_e2b_conn *conn;
	const struct taskbox_exec_req *req;
	struct tb_pstream ps;
	uint64_t deadline, grace_end;
	uint64_t cancel_at; /* when the caller cancelled; 0 while it has not */
	int timed_out;
	int until_newline; /* the request's (ABI 1.3), 0 when older */
	int answered;      /* stdout's first newline ended the stream early */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Feeds the stream to the decoder; with until_newline, ends the transfer
 * (a negative return) once stdout holds a newline. */
static int sink(void *ctx, const unsigned char *p, size_t n)
{
	struct exec_state *st = ctx;
	const struct taskbox_buf *out = &st->ps.res->out;
	size_t had = out->len;
	int rc = tb_pstream_feed(&st->ps, p, n);

	if (rc == 0 && st->until_newline && out->len > had &&
	    memchr(out->data + had, '\n', out->len - had)) {
		st->answered = 1;
		return -1;
	}
	return rc;
}

/* Kills the process through envd's SendSignal RPC (SIGKILL). */
static void kill_process(struct exec_state *st)
{
	struct tb_e2b_conn *conn = st->conn;
	struct curl_slist *headers = NULL;
	struct tb_http_req req = {0};
	struct tb_http_resp resp = {0};
	char body[96], err[TASKBOX_ERRBUF_SIZE];
	char line[TASKBOX_ERRBUF_SIZE + TASKBOX_SANDBOX_ID_MAX + 64];
	char *url = tb_envd_url(conn, "/process.Process/SendSignal");
	int rc;

	if (!st->ps.pid || !url || tb_envd_headers(conn, &headers) != 0 ||
	    tb_http_header(&headers, "Content-Type", "application/json") ||
	    tb_http_header(&headers, "Connect-Protocol-Version", "1")) {
		free(url);
		curl_slist_free_all(headers);
		return;
	}
	snprintf(body, sizeof body,
	         "{\"process\":{\"pid\":%lu},\"signal\":\"SIGNAL_SIGKILL\"}",
	         st->ps.pid);
	req.method = "POST";
	req.url = url;
	req.headers = headers;
	req.body = body;
	req.body_len = strlen(body);
	req.timeout_ms = TB_KILL_TIMEOUT_MS;
	rc = tb_http_run(conn->inst, &req, &resp, err, sizeof err);
	if (rc == TASKBOX_OK && resp.status != 200)
		rc = tb_http_fail(conn->inst, conn->access_token, &resp, 1,
		                  "kill", err, sizeof err);
	/* A process that already ended is not found: that is fine. */
	if (rc != TASKBOX_OK && rc != TASKBOX_E_NOT_FOUND) {
		snprintf(line, sizeof line, "sandbox %s: killing pid %lu: %s",
		         conn->id, st->ps.pid, err);
		st->conn->inst->host->log(TASKBOX_LOG_WARN, TB_E2B_NAME, line);
	}
	tb_http_resp_free(&resp);
	curl_slist_free_all(headers);
	free(url);
}

static int tick(void *ctx)
{
	struct exec_state *st = ctx;
	const struct taskbox_exec_req *req = st->req;
	uint64_t now;

	now = now_ms();
	if (!st->cancel_at && req->cancelled &&
	    req->cancelled(req->cancelled_arg))
		st->cancel_at = now ? now : 1;
	if (st->cancel_at) {
		if (st->ps.pid)
			kill_process(st);
		else if (now - st->cancel_at < TB_EXEC_PID_WAIT_MS)
			return TASKBOX_OK;
		return TASKBOX_E_CANCELLED;
	}
	if (!st->timed_out && now >= st->deadline) {
		if (!st->ps.pid)
			return now - st->deadline < TB_EXEC_PID_WAIT_MS
			           ? TASKBOX_OK
			           : TASKBOX_E_TIMEOUT;
		st->timed_out = 1;
		kill_process(st);
		st->grace_end = now_ms() + TB_EXEC_GRACE_MS;
	}
	if (st->timed_out && now >= st->grace_end)
		return TASKBOX_E_TIMEOUT;
	return TASKBOX_OK;
}

/* The StartRequest as proto-JSON, or NULL (bad env entry or no memory). */
static char *start_request(const struct taskbox_exec_req *req, char *errbuf,
                           size_t errlen, int *rc)
{
	json_t *root, *proc, *args, *envs;
	char *text = NULL;
	size_t i;

	root = json_object();
	proc = json_object();
	args = json_array();
	envs = json_object();
	*rc = TASKBOX_E_NOMEM;
	if (!root || !proc || !args || !envs)
		goto out;
	json_object_set_new(proc, "cmd", json_string(req->argv[0]));
	for (i = 1; req->argv[i]; i++)
		json_array_append_new(args, json_string(req->argv[i]));
	for (i = 0; req->env && req->env[i]; i++) {
		const char *eq = strchr(req->env[i], '=');
		if (!eq || eq == req->env[i]) {
			*rc = tb_e2b_fail(
			    errbuf, errlen, NULL, NULL, TASKBOX_E_INVALID,
			    "exec: env entry %zu is not NAME=value", i);
			goto out;
		}
		json_object_setn_new(envs, req->env[i],
		                     (size_t)(eq - req->env[i]),
		                     json_string(eq + 1));
	}
	json_object_set(proc, "args", args);
	json_object_set(proc, "envs", envs);
	if (req->cwd)
		json_object_set_new(proc, "cwd", json_string(req->cwd));
	json_object_set(root, "process", proc);
	json_object_set_new(root, "stdin", json_false());
	text = json_dumps(root, JSON_COMPACT);
	*rc = text ? TASKBOX_OK : TASKBOX_E_NOMEM;
out:
	if (*rc == TASKBOX_E_NOMEM)
		tb_e2b_fail(errbuf, errlen, NULL, NULL, *rc,
		            "exec: out of memory");
	json_decref(root);
	json_decref(proc);
	json_decref(args);
	json_decref(envs);
	return text;
}

/* Decides the outcome once the stream is over (or abandoned with rc). */
static int outcome(struct exec_state *st, int rc, struct tb_http_resp *resp,
                   char *errbuf, size_t errlen)
{
	struct tb_e2b_conn *conn = st->conn;

	if (rc == TASKBOX_E_CANCELLED)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, rc,
		                   "exec: cancelled; the process was killed");
	if (st->timed_out && st->ps.pid &&
	    (rc == TASKBOX_OK || rc == TASKBOX_E_TIMEOUT)) {
		if (!st->ps.ended)
			st->ps.res->exit_code = -1;
		st->ps.res->timed_out = 1;
		return TASKBOX_OK;
	}
	if (rc == TASKBOX_E_TIMEOUT)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, rc,
		                   "exec: envd did not start the process "
		                   "within %u ms",
		                   (unsigned)st->req->timeout_ms);
	if (st->ps.fail)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL, st->ps.fail,
		                   "exec: %s",
		                   st->ps.fail == TASKBOX_E_NOMEM
		                       ? "out of memory"
		                       : "malformed Connect stream from envd");
	if (rc != TASKBOX_OK)
		return rc;
	if (resp->status != 200)
		return tb_envd_fail(conn, resp, "exec", errbuf, errlen);
	if (st->answered)
		return TASKBOX_OK; /* exit_code -1 unless the end came too */
	if (st->ps.stream_error &&
	    strcmp(st->ps.end_code, "deadline_exceeded") == 0 && st->ps.pid) {
		if (!st->ps.ended)
			st->ps.res->exit_code = -1;
		st->ps.res->timed_out = 1;
		return TASKBOX_OK;
	}
	if (st->ps.stream_error)
		return tb_e2b_fail(
		    errbuf, errlen, conn->inst->api_key, conn->access_token,
		    tb_e2b_connect_code(st->ps.end_code), "exec: %s: %s",
		    st->ps.end_code, st->ps.end_msg);
	if (!tb_pstream_complete(&st->ps))
		return tb_e2b_fail(
		    errbuf, errlen, NULL, NULL, TASKBOX_E_PROTOCOL,
		    "exec: the stream ended before the process's "
		    "end event");
	return TASKBOX_OK;
}

int tb_envd_exec(struct tb_e2b_conn *conn, const struct taskbox_exec_req *req,
                 struct taskbox_exec_result *res, char *errbuf, size_t errlen)
{
	struct exec_state st;
	struct curl_slist *headers = NULL;
	struct tb_http_req hreq = {0};
	struct tb_http_resp resp = {0};
	unsigned char *frame = NULL;
	size_t frame_len = 0;
	char *json = NULL, *url = NULL, tmo[32];
	int rc;

	if (!req->argv || !req->argv[0] || !req->argv[0][0])
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "exec: argv[0] must be a non-empty string");
	if (req->timeout_ms == 0)
		return tb_e2b_fail(errbuf, errlen, NULL, NULL,
		                   TASKBOX_E_INVALID,
		                   "exec: timeout_ms must be > 0");
	memset(&st, 0, sizeof st);
	st.conn = conn;
	st.req = req;
	st.until_newline = req->struct_size >= offsetof(struct taskbox_exec_req,
	                                                until_newline) +
	                                           sizeof req->until_newline &&
	                   req->until_newline;
	tb_pstream_init(&st.ps, conn->inst->host, res, req->output_limit);
	json = start_request(req, errbuf, errlen, &rc);
	if (!json)
		goto out;
	url = tb_envd_url(conn, "/process.Process/Start");
	snprintf(tmo, sizeof tmo, "%lu",
	         (unsigned long)req->timeout_ms + TB_EXEC_SERVER_SLACK_MS);
	if (!url ||
	    tb_frame_encode(0, json, strlen(json), &frame, &frame_len) != 0 ||
	    tb_envd_headers(conn, &headers) != 0 ||
	    tb_http_header(&headers, "Content-Type",
	                   "application/connect+json") != 0 ||
	    tb_http_header(&headers, "Connect-Protocol-Version", "1") != 0 ||
	    tb_http_header(&headers, "Connect-Timeout-Ms", tmo) != 0 ||
	    tb_http_header(&headers, "Keepalive-Ping-Interval", "30") != 0) {
		rc = tb_e2b_fail(errbuf, errlen, NULL, NULL, TASKBOX_E_NOMEM,
		                 "exec: out of memory");
		goto out;
	}
	hreq.method = "POST";
	hreq.url = url;
	hreq.headers = headers;
	hreq.body = frame;
	hreq.body_len = frame_len;
	hreq.sink = sink;
	hreq.tick = tick;
	hreq.ctx = &st;
	hreq.retry_429 = 1;
	st.deadline = now_ms() + req->timeout_ms;
	rc = tb_http_run(conn->inst, &hreq, &resp, errbuf, errlen);
	rc = outcome(&st, rc, &resp, errbuf, errlen);
out:
	tb_pstream_free(&st.ps);
	tb_http_resp_free(&resp);
	curl_slist_free_all(headers);
	free(frame);
	free(json);
	free(url);
	return rc;
}
