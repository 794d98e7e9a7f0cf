/* The decoder of process.Process/Start's answer: Connect envelopes holding
 * proto-JSON ProcessEvents (start with the pid, data with base64 stdout or
 * stderr, keepalive, end with the exit status), closed by an end-of-stream
 * envelope (flags 0x02) that carries an error or nothing. Output is kept in
 * host-allocated buffers up to the caller's limit; the rest is dropped. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "e2b_int.h"

#define TB_PSTREAM_MAX_FRAME (16u * 1024u * 1024u)

struct sink_ctx {
	struct tb_pstream *ps;
	int which; /* 0 stdout, 1 stderr */
};

void tb_pstream_init(struct tb_pstream *ps, const struct taskbox_host *host,
                     struct taskbox_exec_result *res, size_t output_limit)
{
	memset(ps, 0, sizeof *ps);
	ps->host = host;
	ps->res = res;
	ps->output_limit = output_limit;
	res->exit_code = -1;
	tb_frame_reader_init(&ps->reader, TB_PSTREAM_MAX_FRAME);
}

void tb_pstream_free(struct tb_pstream *ps)
{
	tb_frame_reader_free(&ps->reader);
}

/* Appends to stdout or stderr, keeping at most output_limit bytes. */
static void put_output(void *arg, const unsigned char *p, size_t n)
{
	struct sink_ctx *sc = arg;
	struct tb_pstream *ps = sc->ps;
	struct taskbox_buf *buf = sc->which ? &ps->res->err : &ps->res->out;
	int *trunc =
	    sc->which ? &ps->res->err_truncated : &ps->res->out_truncated;
	size_t limit = ps->output_limit;

	if (ps->fail)
		return;
	if (limit && buf->len + n > limit) {
		*trunc = 1;
		n = buf->len < limit ? limit - buf->len : 0;
	}
	if (n == 0)
		return;
	if (buf->len + n > ps->cap[sc->which]) {
		size_t cap = ps->cap[sc->which] ? ps->cap[sc->which] : 4096;
		unsigned char *grown;
		while (cap < buf->len + n)
			cap *= 2;
		grown = ps->host->realloc(buf->data, cap);
		if (!grown) {
			ps->fail = TASKBOX_E_NOMEM;
			return;
		}
		buf->data = grown;
		ps->cap[sc->which] = cap;
	}
	memcpy(buf->data + buf->len, p, n);
	buf->len += n;
}

/* 128+N for "signal: NAME" in Go's words, else -1. */
static int signal_exit(const char *status)
{
	static const struct {
		const char *name;
		int num;
	} sigs[] = {
	    {"hangup", 1},
	    {"interrupt", 2},
	    {"quit", 3},
	    {"illegal instruction", 4},
	    {"trace/breakpoint trap", 5},
	    {"aborted", 6},
	    {"bus error", 7},
	    {"floating point exception", 8},
	    {"killed", 9},
	    {"user defined signal 1", 10},
	    {"segmentation fault", 11},
	    {"user defined signal 2", 12},
	    {"broken pipe", 13},
	    {"alarm clock", 14},
	    {"terminated", 15},
	};
	size_t i;

	if (!status || strncmp(status, "signal: ", 8) != 0)
		return -1;
	status += 8;
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		size_t n = strlen(sigs[i].name);
		if (strncmp(status, sigs[i].name, n) == 0 &&
		    (status[n] == '\0' || status[n] == ' '))
			return 128 + sigs[i].num;
	}
	return -1;
}

/* The EndEvent: protojson leaves out zero values (exitCode 0, exited
 * false), so an absent exitCode is 0. */
static void take_end(struct tb_pstream *ps, json_t *end)
{
	json_t *code = json_object_get(end, "exitCode");
	const char *status = json_string_value(json_object_get(end, "status"));
	int exited = json_is_true(json_object_get(end, "exited"));
	json_int_t c = json_is_integer(code) ? json_integer_value(code) : 0;

	ps->ended = 1;
	if (exited && c >= 0 && c <= 255)
		ps->res->exit_code = (int)c;
	else
		ps->res->exit_code = signal_exit(status);
}

static int take_event(struct tb_pstream *ps, json_t *msg)
{
	json_t *ev = json_object_get(msg, "event");
	json_t *x;

	if (!json_is_object(ev))
		return TASKBOX_E_PROTOCOL;
	if ((x = json_object_get(ev, "start")) != NULL) {
		json_t *pid = json_object_get(x, "pid");
		if (!json_is_integer(pid) || json_integer_value(pid) <= 0 ||
		    json_integer_value(pid) > 0xffffffffLL)
			return TASKBOX_E_PROTOCOL;
		ps->pid = (unsigned long)json_integer_value(pid);
	} else if ((x = json_object_get(ev, "data")) != NULL) {
		static const char *const names[2] = {"stdout", "stderr"};
		int i;
		for (i = 0; i < 2; i++) {
			json_t *s = json_object_get(x, names[i]);
			struct sink_ctx sc = {ps, i};
			if (!s)
				continue;
			if (!json_is_string(s) ||
			    tb_base64_decode(json_string_value(s),
			                     json_string_length(s), put_output,
			                     &sc) != 0)
				return TASKBOX_E_PROTOCOL;
		}
	} else if ((x = json_object_get(ev, "end")) != NULL) {
		if (!json_is_object(x))
			return TASKBOX_E_PROTOCOL;
		take_end(ps, x);
	}
	/* keepalive and events of later envd versions: nothing to do */
	return ps->fail;
}

static int on_frame(void *ctx, unsigned flags, const unsigned char *data,
                    size_t len)
{
	struct tb_pstream *ps = ctx;
	json_t *msg;
	int rc = TASKBOX_OK;

	if (flags & TB_FRAME_COMPRESSED)
		return TASKBOX_E_PROTOCOL;
	msg = json_loadb((const char *)data, len, 0, NULL);
	if (!json_is_object(msg)) {
		json_decref(msg);
		return TASKBOX_E_PROTOCOL;
	}
	if (flags & TB_FRAME_END_STREAM) {
		json_t *err = json_object_get(msg, "error");
		ps->stream_done = 1;
		if (json_is_object(err)) {
			const char *c =
			    json_string_value(json_object_get(err, "code"));
			const char *m =
			    json_string_value(json_object_get(err, "message"));
			ps->stream_error = 1;
			snprintf(ps->end_code, sizeof ps->end_code, "%s",
			         c ? c : "unknown");
			snprintf(ps->end_msg, sizeof ps->end_msg, "%s",
			         m ? m : "");
		}
	} else if (ps->stream_done) {
		rc = TASKBOX_E_PROTOCOL; /* nothing may follow the end */
	} else {
		rc = take_event(ps, msg);
	}
	json_decref(msg);
	return rc;
}

int tb_pstream_feed(struct tb_pstream *ps, const unsigned char *p, size_t n)
{
	int rc;

	if (ps->fail)
		return ps->fail;
	rc = tb_frame_feed(&ps->reader, p, n, on_frame, ps);
	if (rc != 0)
		ps->fail = rc;
	return rc;
}

int tb_pstream_complete(const struct tb_pstream *ps)
{
	return ps->ended && ps->stream_done && !tb_frame_pending(&ps->reader);
}
