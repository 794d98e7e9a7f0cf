/* exec: the host's argv run in the pod through a small sh wrapper, since
 * pods/exec has no cwd or env parameter. The wrapper changes directory,
 * says its pid on stderr (taken off again by the channel decoder), exports
 * the environment and execs argv. The timeout and cancellation are
 * enforced from here: the wrapper's process group is signalled through a
 * second exec, and the stream is still read to its end (or abandoned on
 * cancel). max_concurrent_execs gates how many run at once. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/exec_deadline.h"
#include "k8s_int.h"

#define HAS(p, type, field)                                                    \
	((p)->struct_size >= offsetof(type, field) + sizeof((p)->field))

/* The wrapper: $1 the directory, $2 the number of NAME=value entries that
 * follow, then argv. Exit 97 without the marker: the directory is not
 * there. The home is made again when missing (a Sandbox's pod made anew by
 * its controller starts without it). */
#define WRAPPER_TAIL                                                           \
	"echo \"" TB_K8S_PID_MARKER "$$\" >&2; shift; n=$1; shift; while [ "   \
	"\"$n\" -gt 0 ]; do export \"$1\"; shift; n=$((n-1)); done; exec "     \
	"\"$@\""
#define WRAPPER "cd -- \"$1\" 2>/dev/null || exit 97; " WRAPPER_TAIL
#define WRAPPER_HOME                                                           \
	"{ cd -- \"$1\" 2>/dev/null || { mkdir -p -- \"$1\" && cd -- "         \
	"\"$1\"; }; } 2>/dev/null || exit 97; " WRAPPER_TAIL
#define CWD_MISSING_EXIT 97
#define TERM_GRACE_MS 2000u
#define ABANDON_AFTER_MS 10000u
/* Beyond the command's own timeout: how long the stream may take. */
#define PLAIN_SLACK_MS 30000u

/* ---- the gate of max_concurrent_execs ---- */

/* Waits for a free slot, asking cancelled (when given) every 100 ms;
 * TASKBOX_OK with the slot taken, or TASKBOX_E_CANCELLED. */
static int gate_enter(struct tb_k8s *inst, int (*cancelled)(void *), void *arg)
{
	int rc = TASKBOX_OK;

	if (!inst->exec_limit)
		return TASKBOX_OK;
	pthread_mutex_lock(&inst->gate_lock);
	while (inst->execs_running >= inst->exec_limit) {
		struct timespec until;
		if (cancelled && cancelled(arg)) {
			rc = TASKBOX_E_CANCELLED;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&inst->gate_cond, &inst->gate_lock,
		                       &until);
	}
	if (rc == TASKBOX_OK)
		inst->execs_running++;
	pthread_mutex_unlock(&inst->gate_lock);
	return rc;
}

static void gate_leave(struct tb_k8s *inst)
{
	if (!inst->exec_limit)
		return;
	pthread_mutex_lock(&inst->gate_lock);
	inst->execs_running--;
	pthread_cond_signal(&inst->gate_cond);
	pthread_mutex_unlock(&inst->gate_lock);
}

char *tb_k8s_resolve(const struct tb_k8s_conn *c, const char *path)
{
	const char *home = c->inst->workdir;
	char *out;

	if (!path || !*path)
		return strdup(home);
	if (path[0] == '/')
		return strdup(path);
	out = malloc(strlen(home) + strlen(path) + 2);
	if (out)
		sprintf(out, "%s/%s", home, path);
	return out;
}

static void result_free(const struct taskbox_host *host,
                        struct taskbox_exec_result *res)
{
	host->free(res->out.data);
	host->free(res->err.data);
	res->out.data = res->err.data = NULL;
	res->out.len = res->err.len = 0;
}

/* Turns the decoded stream into res's exit code, or an error. */
static int conclude(struct tb_k8s_chan *ch, struct taskbox_exec_result *res,
                    const char *what, char *errbuf, size_t errlen)
{
	char msg[400];
	int code;
	enum tb_k8s_status_kind kind;

	if (tb_k8s_chan_finish(ch) != 0)
		return tb_k8s_fail(errbuf, errlen, ch->fail, "out of memory");
	kind = tb_k8s_chan_status(ch, &code, msg, sizeof msg);
	switch (kind) {
	case TB_K8S_ST_EXIT:
		res->exit_code = code;
		return TASKBOX_OK;
	case TB_K8S_ST_NOEXIT:
		return tb_k8s_fail(
		    errbuf, errlen, TASKBOX_E_UNSUPPORTED,
		    "%s: the command did not start in the pod "
		    "(%s); the k8s provider needs /bin/sh in the "
		    "image",
		    what, msg);
	case TB_K8S_ST_BAD:
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                   "%s: channel 3 held no Status: %s", what,
		                   msg);
	default:
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_IO,
		                   "%s: the stream ended without the command's "
		                   "status; it may still be running",
		                   what);
	}
}

/* One exec that is not an exec op's: a kill, a probe, a file op. The
 * result is fully the caller's; the gate is not taken. */
static int run_plain(struct tb_k8s_conn *c, const char *const *argv,
                     const unsigned char *stdin_data, size_t stdin_len,
                     uint32_t timeout_ms, size_t output_limit,
                     struct taskbox_exec_result *res, char *errbuf,
                     size_t errlen)
{
	struct tb_k8s_chan ch;
	struct tb_k8s_exec_io io;
	static const unsigned char empty[1];
	int rc;

	res->exit_code = -1;
	tb_k8s_chan_init(&ch, c->inst->host, res, output_limit, 0);
	memset(&io, 0, sizeof io);
	io.stdin_data = stdin_data ? stdin_data : NULL;
	if (stdin_data && !stdin_len)
		io.stdin_data = empty;
	io.stdin_len = stdin_len;
	io.chan = &ch;
	io.deadline_ms = tb_k8s_now_ms() + timeout_ms + PLAIN_SLACK_MS;
	rc = tb_k8s_ws_exec(c, argv, &io, errbuf, errlen);
	if (rc == TASKBOX_OK)
		rc = conclude(&ch, res, "exec", errbuf, errlen);
	tb_k8s_chan_free(&ch);
	if (rc != TASKBOX_OK)
		result_free(c->inst->host, res);
	return rc;
}

int tb_k8s_exec_plain(struct tb_k8s_conn *c, const char *const *argv,
                      const unsigned char *stdin_data, size_t stdin_len,
                      uint32_t timeout_ms, size_t output_limit,
                      struct taskbox_exec_result *res, char *errbuf,
                      size_t errlen)
{
	int rc;

	gate_enter(c->inst, NULL, NULL);
	rc = run_plain(c, argv, stdin_data, stdin_len, timeout_ms, output_limit,
	               res, errbuf, errlen);
	gate_leave(c->inst);
	if (rc == TASKBOX_E_NOT_FOUND || rc == TASKBOX_E_INVALID ||
	    rc == TASKBOX_E_IO)
		rc = tb_k8s_check_gone(c, rc, errbuf, errlen);
	return rc;
}

/* ---- the exec op ---- */

struct run {
	struct tb_k8s_conn *c;
	struct tb_k8s_chan *ch;
	const struct taskbox_exec_req *req;
	struct tb_exec_deadline ladder;
	int answered; /* until_newline: stdout's newline ended the stream */
};

/* Signals the wrapper's process group (its pid from the marker); 0
 * (nothing sent) while the marker has not come. */
static int kill_group(void *arg, const char *sig)
{
	struct run *r = arg;
	char pid[32], err[TASKBOX_ERRBUF_SIZE];
	const char *argv[] = {
	    "/bin/sh", "-c", "kill -s $0 -- -$1 2>/dev/null || kill -s $0 $1",
	    sig,       pid,  NULL};
	struct taskbox_exec_result res;

	if (r->ch->pid <= 1)
		return 0;
	snprintf(pid, sizeof pid, "%ld", r->ch->pid);
	memset(&res, 0, sizeof res);
	res.struct_size = sizeof res;
	if (run_plain(r->c, argv, NULL, 0, 10000, 4096, &res, err,
	              sizeof err) == TASKBOX_OK)
		result_free(r->c->inst->host, &res);
	return 1;
}

/* The deadline ladder, between reads of the channels; with
 * until_newline, the end of the stream once stdout holds a newline. */
static int tick(void *arg)
{
	struct run *r = arg;
	const struct taskbox_exec_req *req = r->req;
	const struct taskbox_buf *out = &r->ch->res->out;

	if (HAS(req, struct taskbox_exec_req, until_newline) &&
	    req->until_newline && out->len &&
	    memchr(out->data, '\n', out->len)) {
		r->answered = 1;
		return TASKBOX_E_CANCELLED; /* ends the stream; not a failure */
	}
	return tb_exec_deadline_tick(&r->ladder, tb_k8s_now_ms, req->cancelled,
	                             req->cancelled_arg, kill_group, r);
}

/* The wrapped argv; *owned gets what to free. */
static const char **wrapped_argv(const struct taskbox_exec_req *req,
                                 const char *dir, const char *script,
                                 char *count, size_t countlen)
{
	size_t nenv = 0, nargv = 0, i, k = 0;
	const char **out;

	while (req->env && req->env[nenv])
		nenv++;
	while (req->argv[nargv])
		nargv++;
	out = malloc((nenv + nargv + 7) * sizeof *out);
	if (!out)
		return NULL;
	snprintf(count, countlen, "%zu", nenv);
	out[k++] = "/bin/sh";
	out[k++] = "-c";
	out[k++] = script;
	out[k++] = "sh";
	out[k++] = dir;
	out[k++] = count;
	for (i = 0; i < nenv; i++)
		out[k++] = req->env[i];
	for (i = 0; i < nargv; i++)
		out[k++] = req->argv[i];
	out[k] = NULL;
	return out;
}

/* One run of the wrapped argv; *pid gets the wrapper's pid (0: none came). */
static int run_once(struct tb_k8s_conn *c, const struct taskbox_exec_req *req,
                    const char *const *argv, struct taskbox_exec_result *res,
                    long *pid, char *errbuf, size_t errlen)
{
	struct tb_k8s_chan ch;
	struct tb_k8s_exec_io io;
	struct run r;
	int rc;

	res->exit_code = -1;
	tb_k8s_chan_init(&ch, c->inst->host, res, req->output_limit, 1);
	memset(&r, 0, sizeof r);
	r.c = c;
	r.ch = &ch;
	r.req = req;
	r.ladder.deadline =
	    tb_k8s_now_ms() + (req->timeout_ms ? req->timeout_ms : 3600000u);
	r.ladder.term_grace_ms = TERM_GRACE_MS;
	r.ladder.abandon_ms = ABANDON_AFTER_MS;
	memset(&io, 0, sizeof io);
	io.chan = &ch;
	io.tick = tick;
	io.tick_ctx = &r;
	if (gate_enter(c->inst, req->cancelled, req->cancelled_arg) !=
	    TASKBOX_OK) {
		tb_k8s_chan_free(&ch);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_CANCELLED,
		                   "exec: cancelled while waiting for a slot "
		                   "(settings.max_concurrent_execs)");
	}
	rc = tb_k8s_ws_exec(c, argv, &io, errbuf, errlen);
	gate_leave(c->inst);
	if (r.answered) {
		rc =
		    tb_k8s_chan_finish(&ch) == 0
		        ? TASKBOX_OK
		        : tb_k8s_fail(errbuf, errlen, ch.fail, "out of memory");
		res->exit_code = -1; /* the command's end not waited for */
	} else if (rc == TASKBOX_OK)
		rc = conclude(&ch, res, "exec", errbuf, errlen);
	if (rc == TASKBOX_OK)
		res->timed_out = r.ladder.timed_out;
	*pid = ch.pid;
	tb_k8s_chan_free(&ch);
	return rc;
}

int tb_k8s_exec(struct tb_k8s_conn *c, const struct taskbox_exec_req *req,
                struct taskbox_exec_result *res, char *errbuf, size_t errlen)
{
	const struct taskbox_host *host = c->inst->host;
	struct tb_k8s_spilled sp;
	char count[24];
	char *dir, *script = NULL;
	const char *wrapper;
	const char **argv;
	long pid = 0;
	int rc, tries = 0;

	if (!HAS(req, struct taskbox_exec_req, cancelled_arg) || !req->argv ||
	    !req->argv[0])
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "exec: no argv, or a request struct too "
		                   "short");
	memset(&sp, 0, sizeof sp);
	dir = tb_k8s_resolve(c, req->cwd);
	wrapper = req->cwd && req->cwd[0] ? WRAPPER : WRAPPER_HOME;
	argv =
	    dir ? wrapped_argv(req, dir, wrapper, count, sizeof count) : NULL;
	if (!argv || tb_k8s_spill(c, argv + 4, &sp) != 0 ||
	    (sp.count && !(script = malloc(strlen(tb_k8s_spill_prelude) +
	                                   strlen(wrapper) + 1)))) {
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                 "out of memory");
		goto out;
	}
	if (script) {
		sprintf(script, "%s%s", tb_k8s_spill_prelude, wrapper);
		argv[2] = script;
	}
	for (;;) {
		rc = run_once(c, req, argv, res, &pid, errbuf, errlen);
		if (rc != TASKBOX_OK || pid || !sp.count || tries++ ||
		    res->exit_code != TB_K8S_SPILL_MISSING_EXIT)
			break;
		/* The long arguments' files are not in the pod yet. */
		result_free(host, res);
		rc = tb_k8s_spill_upload(c, &sp, errbuf, errlen);
		if (rc != TASKBOX_OK)
			goto out;
	}
	if (rc == TASKBOX_OK && !pid && res->exit_code == CWD_MISSING_EXIT) {
		result_free(host, res);
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOT_FOUND,
		                 "cwd '%.200s' is not a directory in the "
		                 "sandbox",
		                 dir);
		goto out;
	}
	if (rc == TASKBOX_E_NOT_FOUND || rc == TASKBOX_E_INVALID ||
	    rc == TASKBOX_E_IO)
		rc = tb_k8s_check_gone(c, rc, errbuf, errlen);
out:
	tb_k8s_spill_free(&sp);
	free(script);
	free(argv);
	free(dir);
	return rc;
}
