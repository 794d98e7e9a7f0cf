/* docker provider: commands through the engine's exec API: create, an
 * attached start whose raw stream is demultiplexed as it arrives (8-byte
 * frame headers, frames split anywhere across reads), then inspect for the
 * exit code (not asked for when the caller takes the first line of stdout
 * as the answer). The command runs under a one-line sh prelude that reports its
 * pid on stderr first (stripped from the output); an exec's process is a
 * session and group leader, so a timeout kills that group from inside with
 * a second exec: TERM, then KILL. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/exec_deadline.h"
#include "docker.h"

#define MARKER "taskbox-exec-pid "
#define TERM_GRACE_MS 1500
#define ABANDON_MS 5000

struct sink {
	unsigned char *data;
	size_t len, cap, limit;
	int truncated;
};

struct run {
	struct tb_dk_conn *c;
	const struct taskbox_host *host;
	int (*cancelled)(void *);
	void *cancelled_arg;
	int wrapped;
	unsigned char hdr[8];
	size_t hdr_have;
	uint32_t frame_left;
	int stream;
	struct sink out, err;
	char marker[64];
	size_t marker_len;
	int marker_done;
	long pid;
	struct tb_exec_deadline ladder;
	int nomem, bad;
	int until_newline; /* stop once stdout holds a newline (ABI 1.3) */
	int answered;      /* stdout's newline ended the stream early */
	long status;
	int status_checked;
	struct tb_dk_resp errbody;
	CURL *h;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int sink_add(struct run *r, struct sink *s, const unsigned char *p,
                    size_t n)
{
	size_t cap;
	unsigned char *nb;

	if (s->limit && s->len + n > s->limit) {
		s->truncated = 1;
		n = s->limit - s->len;
	}
	if (!n)
		return 0;
	if (s->cap - s->len < n) {
		cap = s->cap ? s->cap : 4096;
		while (cap - s->len < n)
			cap *= 2;
		if (s->limit && cap > s->limit)
			cap = s->limit;
		nb = r->host->realloc(s->data, cap);
		if (!nb)
			return -1;
		s->data = nb;
		s->cap = cap;
	}
	memcpy(s->data + s->len, p, n);
	s->len += n;
	return 0;
}

/* stderr bytes: the prelude's pid line comes first and is not output. */
static int err_add(struct run *r, const unsigned char *p, size_t n)
{
	while (r->wrapped && !r->marker_done && n) {
		r->marker[r->marker_len++] = (char)*p;
		p++;
		n--;
		if (r->marker[r->marker_len - 1] == '\n' ||
		    r->marker_len == sizeof(r->marker) - 1) {
			r->marker[r->marker_len] = '\0';
			r->marker_done = 1;
			if (!strncmp(r->marker, MARKER, strlen(MARKER)) &&
			    r->marker[r->marker_len - 1] == '\n') {
				r->pid = strtol(r->marker + strlen(MARKER),
				                NULL, 10);
			} else if (sink_add(r, &r->err,
			                    (unsigned char *)r->marker,
			                    r->marker_len)) {
				return -1;
			}
		}
	}
	return n ? sink_add(r, &r->err, p, n) : 0;
}

/* Demultiplexes one read of the raw stream. */
static int demux(struct run *r, const unsigned char *p, size_t n)
{
	size_t k;

	while (n) {
		if (!r->frame_left) {
			k = sizeof(r->hdr) - r->hdr_have;
			k = k < n ? k : n;
			memcpy(r->hdr + r->hdr_have, p, k);
			r->hdr_have += k;
			p += k;
			n -= k;
			if (r->hdr_have < sizeof(r->hdr))
				break;
			r->hdr_have = 0;
			if (r->hdr[0] > 2 || r->hdr[1] || r->hdr[2] ||
			    r->hdr[3]) {
				r->bad = 1;
				return -1;
			}
			r->stream = r->hdr[0];
			r->frame_left = (uint32_t)r->hdr[4] << 24 |
			                (uint32_t)r->hdr[5] << 16 |
			                (uint32_t)r->hdr[6] << 8 | r->hdr[7];
			continue;
		}
		k = n < r->frame_left ? n : r->frame_left;
		if (r->stream == 2 ? err_add(r, p, k)
		                   : sink_add(r, &r->out, p, k)) {
			r->nomem = 1;
			return -1;
		}
		if (r->stream != 2 && r->until_newline && memchr(p, '\n', k)) {
			r->answered = 1;
			return -1;
		}
		r->frame_left -= (uint32_t)k;
		p += k;
		n -= k;
	}
	return 0;
}

static size_t on_stream(char *p, size_t size, size_t n, void *arg)
{
	struct run *r = arg;
	size_t total = size * n;

	if (!r->status_checked) {
		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &r->status);
		r->status_checked = 1;
	}
	if (r->status != 200) {
		if (r->errbody.len + total <= 65536) {
			char *nb = realloc(r->errbody.body,
			                   r->errbody.len + total + 1);
			if (!nb)
				return 0;
			memcpy(nb + r->errbody.len, p, total);
			r->errbody.body = nb;
			r->errbody.len += total;
			nb[r->errbody.len] = '\0';
		}
		return total;
	}
	return demux(r, (unsigned char *)p, total) ? 0 : total;
}

/* Sends sig to the command's process group from inside the sandbox; 0
 * (nothing sent) while its pid has not come. */
static int kill_group(void *arg, const char *sig)
{
	struct run *r = arg;
	char pid[32], err[TASKBOX_ERRBUF_SIZE];
	const char *argv[] = {"/bin/sh", "-c", "kill -s $0 -$1",
	                      sig,       pid,  NULL};
	struct taskbox_exec_result res;

	if (r->pid <= 1)
		return 0;
	snprintf(pid, sizeof(pid), "%ld", r->pid);
	memset(&res, 0, sizeof(res));
	tb_dk_exec_simple(r->c, argv, 10000, 4096, &res, err, sizeof(err));
	r->host->free(res.out.data);
	r->host->free(res.err.data);
	return 1;
}

/* The deadline ladder, between reads of the stream. */
static int tick(void *arg)
{
	struct run *r = arg;

	return tb_exec_deadline_tick(&r->ladder, now_ms, r->cancelled,
	                             r->cancelled_arg, kill_group, r);
}

static json_t *exec_body(struct tb_dk_conn *c, const char *const *argv,
                         const char *const *env, const char *cwd, int wrapped,
                         const char *user)
{
	json_t *body, *cmd = json_array(), *jenv;
	char *dir = cwd ? tb_dk_resolve(c, cwd) : strdup(c->home);

	if (wrapped) {
		json_array_append_new(cmd, json_string("/bin/sh"));
		json_array_append_new(cmd, json_string("-c"));
		json_array_append_new(
		    cmd, json_string("echo " MARKER "$$ >&2; exec \"$@\""));
		json_array_append_new(cmd, json_string("sh"));
	}
	for (size_t i = 0; argv[i]; i++)
		json_array_append_new(cmd, json_string(argv[i]));
	body = json_pack("{sb sb sb sb so ss*}", "AttachStdin", 0,
	                 "AttachStdout", 1, "AttachStderr", 1, "Tty", 0, "Cmd",
	                 cmd, "WorkingDir", dir);
	free(dir);
	if (body && env) {
		jenv = json_array();
		for (size_t i = 0; env[i]; i++)
			json_array_append_new(jenv, json_string(env[i]));
		json_object_set_new(body, "Env", jenv);
	}
	if (body && user)
		json_object_set_new(body, "User", json_string(user));
	return body;
}

/* POST /containers/ID/exec; writes the exec id into eid. */
static int exec_create(struct tb_dk_conn *c, json_t *body, char *eid,
                       size_t eidlen, char *errbuf, size_t errlen)
{
	struct tb_dk_resp r;
	char path[128], what[128];
	char *text = json_dumps(body, JSON_COMPACT);
	json_t *ans;
	int code;

	if (!text)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	snprintf(path, sizeof(path), "/containers/%s/exec", c->id);
	code = tb_dk_request(c->dk, "POST", path, "application/json", text,
	                     strlen(text), &r, errbuf, errlen);
	free(text);
	if (code != TASKBOX_OK)
		return code;
	if (r.status != 201) {
		/* Removed or stopped behind our back: Docker says 404 or
		 * 409, podman 404 or 500 ("container state improper"). */
		enum tb_dk_state st = tb_dk_container_state(c->dk, c->id);
		snprintf(what, sizeof(what), "sandbox %.12s%s", c->id,
		         st == TB_DK_MISSING   ? " was removed"
		         : st == TB_DK_STOPPED ? " is not running"
		                               : "");
		code = tb_dk_http_error(&r, what, errbuf, errlen);
		if (st == TB_DK_MISSING || st == TB_DK_STOPPED)
			code = TASKBOX_E_GONE;
		tb_dk_resp_free(&r);
		return code;
	}
	ans = json_loadb(r.body, r.len, 0, NULL);
	tb_dk_resp_free(&r);
	snprintf(eid, eidlen, "%s",
	         json_string_value(json_object_get(ans, "Id"))
	             ? json_string_value(json_object_get(ans, "Id"))
	             : "");
	json_decref(ans);
	if (!eid[0] || strspn(eid, "0123456789abcdef") != strlen(eid))
		return tb_dk_fail(TASKBOX_E_PROTOCOL, errbuf, errlen,
		                  "the engine's exec create gave no Id");
	return TASKBOX_OK;
}

/* GET /exec/ID/json until the process is no longer running. */
static int exec_exit(struct tb_dk_conn *c, const char *eid, int *exit_code,
                     char *errbuf, size_t errlen)
{
	struct timespec pause = {0, 50 * 1000000};
	struct tb_dk_resp r;
	char path[160];
	json_t *j, *ec;
	int code, running;

	snprintf(path, sizeof(path), "/exec/%s/json", eid);
	for (int tries = 0; tries < 100; tries++) {
		code = tb_dk_request(c->dk, "GET", path, NULL, NULL, 0, &r,
		                     errbuf, errlen);
		if (code != TASKBOX_OK)
			return code;
		if (r.status != 200) {
			code = tb_dk_http_error(&r, "exec inspect", errbuf,
			                        errlen);
			tb_dk_resp_free(&r);
			return code;
		}
		j = json_loadb(r.body, r.len, 0, NULL);
		tb_dk_resp_free(&r);
		running = json_is_true(json_object_get(j, "Running"));
		ec = json_object_get(j, "ExitCode");
		*exit_code =
		    json_is_integer(ec) ? (int)json_integer_value(ec) : -1;
		json_decref(j);
		if (!running)
			return TASKBOX_OK;
		nanosleep(&pause, NULL);
	}
	*exit_code = -1;
	return TASKBOX_OK;
}

/* Runs argv (wrapped: under the pid prelude) to its end, or, with
 * until_newline, until stdout holds a newline: the exit code is then not
 * asked for (-1). */
static int run_exec(struct tb_dk_conn *c, const char *const *argv,
                    const char *const *env, const char *cwd,
                    uint32_t timeout_ms, size_t limit, int wrapped,
                    int until_newline, const char *user,
                    int (*cancelled)(void *), void *cancelled_arg,
                    struct taskbox_exec_result *res, char *errbuf,
                    size_t errlen)
{
	static const char start_body[] = "{\"Detach\":false,\"Tty\":false}";
	struct curl_slist *hdrs = NULL;
	struct run r;
	char eid[128], path[160];
	json_t *body;
	int code;

	memset(&r, 0, sizeof(r));
	r.c = c;
	r.host = c->dk->host;
	r.cancelled = cancelled;
	r.cancelled_arg = cancelled_arg;
	r.wrapped = wrapped;
	r.until_newline = until_newline;
	r.out.limit = r.err.limit = limit;
	r.ladder.deadline = now_ms() + timeout_ms;
	r.ladder.term_grace_ms = TERM_GRACE_MS;
	r.ladder.abandon_ms = ABANDON_MS;
	res->exit_code = -1;
	body = exec_body(c, argv, env, cwd, wrapped, user);
	if (!body)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	code = exec_create(c, body, eid, sizeof(eid), errbuf, errlen);
	json_decref(body);
	if (code != TASKBOX_OK)
		return code;
	snprintf(path, sizeof(path), "/exec/%s/start", eid);
	r.h = tb_dk_handle(c->dk, path, errbuf, errlen);
	if (!r.h)
		return TASKBOX_E_NOMEM;
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	curl_easy_setopt(r.h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(r.h, CURLOPT_POSTFIELDS, start_body);
	curl_easy_setopt(r.h, CURLOPT_POSTFIELDSIZE_LARGE,
	                 (curl_off_t)strlen(start_body));
	curl_easy_setopt(r.h, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(r.h, CURLOPT_WRITEDATA, &r);
	code = tb_dk_perform(c->dk, r.h, tick, &r, errbuf, errlen);
	if (r.answered)
		code = TASKBOX_OK; /* cut short on purpose */
	if (code == TASKBOX_OK && !r.status_checked)
		curl_easy_getinfo(r.h, CURLINFO_RESPONSE_CODE, &r.status);
	curl_easy_cleanup(r.h);
	curl_slist_free_all(hdrs);
	if (r.nomem)
		code = tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen,
		                  "no memory for the command's output");
	else if (r.bad)
		code = tb_dk_fail(TASKBOX_E_PROTOCOL, errbuf, errlen,
		                  "malformed exec stream from the engine");
	else if (code == TASKBOX_E_CANCELLED)
		tb_dk_fail(code, errbuf, errlen, "exec cancelled");
	else if (code == TASKBOX_E_TIMEOUT && r.ladder.timed_out)
		code = TASKBOX_OK; /* abandoned after TERM and KILL */
	else if (code == TASKBOX_OK && r.status != 200) {
		r.errbody.status = r.status;
		code =
		    tb_dk_http_error(&r.errbody, "exec start", errbuf, errlen);
		if (code == TASKBOX_E_NOT_FOUND)
			code = TASKBOX_E_GONE;
	} else if (code == TASKBOX_OK && !r.answered) {
		code = exec_exit(c, eid, &res->exit_code, errbuf, errlen);
	}
	tb_dk_resp_free(&r.errbody);
	if (wrapped && !r.marker_done && r.marker_len &&
	    sink_add(&r, &r.err, (unsigned char *)r.marker, r.marker_len))
		r.nomem = 1;
	res->timed_out = r.ladder.timed_out;
	res->out_truncated = r.out.truncated;
	res->err_truncated = r.err.truncated;
	res->out.data = r.out.len ? r.out.data : NULL;
	res->out.len = r.out.len;
	res->err.data = r.err.len ? r.err.data : NULL;
	res->err.len = r.err.len;
	if (!r.out.len)
		r.host->free(r.out.data);
	if (!r.err.len)
		r.host->free(r.err.data);
	return code;
}

int tb_dk_exec_simple(struct tb_dk_conn *c, const char *const *argv,
                      uint32_t timeout_ms, size_t limit,
                      struct taskbox_exec_result *res, char *errbuf,
                      size_t errlen)
{
	return run_exec(c, argv, NULL, NULL, timeout_ms, limit, 0, 0, "0", NULL,
	                NULL, res, errbuf, errlen);
}

int tb_dk_exec(void *conn, const struct taskbox_exec_req *req,
               struct taskbox_exec_result *res, char *errbuf, size_t errlen)
{
	size_t has_cancel =
	    offsetof(struct taskbox_exec_req, cancelled_arg) + sizeof(void *);
	size_t has_newline = offsetof(struct taskbox_exec_req, until_newline) +
	                     sizeof(req->until_newline);

	if (!req->argv || !req->argv[0])
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "exec: argv must name a command");
	if (!req->timeout_ms)
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "exec: timeout_ms must be positive");
	int (*cancelled)(void *) =
	    req->struct_size >= has_cancel ? req->cancelled : NULL;
	void *cancelled_arg =
	    req->struct_size >= has_cancel ? req->cancelled_arg : NULL;
	int until_newline =
	    req->struct_size >= has_newline && req->until_newline;
	int code =
	    run_exec(conn, req->argv, req->env, req->cwd, req->timeout_ms,
	             req->output_limit, 1, until_newline, NULL, cancelled,
	             cancelled_arg, res, errbuf, errlen);

	/* GONE from a connection made from connect's cache: the command did
	 * not start (the engine refused the exec); connect again and run it
	 * on what that finds. */
	if (code != TASKBOX_OK && tb_dk_recheck(conn, &code, errbuf, errlen)) {
		struct tb_dk_conn *c = conn;
		c->dk->host->free(res->out.data);
		c->dk->host->free(res->err.data);
		memset(&res->out, 0, sizeof(res->out));
		memset(&res->err, 0, sizeof(res->err));
		code = run_exec(conn, req->argv, req->env, req->cwd,
		                req->timeout_ms, req->output_limit, 1,
		                until_newline, NULL, cancelled, cancelled_arg,
		                res, errbuf, errlen);
	}
	return code;
}
