/* Decoding of the channel.k8s.io exec protocol (v4 and v5): each WebSocket
 * data message is one channel byte and its payload. stdout and stderr go
 * into the exec result, capped; the wrapper's pid marker is taken off the
 * front of stderr; channel 3's Status is collected and read at the end.
 * Pure functions over buffers, so that they can be fuzzed. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_int.h"

#define STATUS_CAP (64 * 1024)

enum { CH_STDIN = 0, CH_STDOUT = 1, CH_STDERR = 2, CH_ERROR = 3 };

void tb_k8s_chan_init(struct tb_k8s_chan *ch, const struct taskbox_host *host,
                      struct taskbox_exec_result *res, size_t output_limit,
                      int want_marker)
{
	memset(ch, 0, sizeof *ch);
	ch->host = host;
	ch->res = res;
	ch->output_limit = output_limit;
	ch->want_marker = want_marker;
}

/* Appends to stream s (0 out, 1 err) up to the limit; the rest is
 * dropped and the stream marked truncated. */
static int keep(struct tb_k8s_chan *ch, int s, const unsigned char *p, size_t n)
{
	struct taskbox_buf *b = s ? &ch->res->err : &ch->res->out;
	int *trunc = s ? &ch->res->err_truncated : &ch->res->out_truncated;
	size_t room = n;

	if (ch->output_limit) {
		room =
		    b->len < ch->output_limit ? ch->output_limit - b->len : 0;
		if (room < n) {
			*trunc = 1;
			n = room;
		}
	}
	if (n == 0)
		return 0;
	if (b->len + n > ch->cap[s]) {
		size_t cap = ch->cap[s] ? ch->cap[s] : 4096;
		unsigned char *grown;
		while (cap < b->len + n)
			cap *= 2;
		if (ch->output_limit && cap > ch->output_limit)
			cap = ch->output_limit;
		grown = ch->host->realloc(b->data, cap);
		if (!grown)
			return ch->fail = TASKBOX_E_NOMEM;
		b->data = grown;
		ch->cap[s] = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

/* The pending marker text turned out not to be one: it is stderr. */
static int marker_give_up(struct tb_k8s_chan *ch)
{
	size_t n = ch->marker_len;

	ch->want_marker = 0;
	ch->marker_len = 0;
	return keep(ch, 1, (const unsigned char *)ch->marker, n);
}

/* Parses a whole marker line ("taskbox-exec-pid N"). */
static void marker_take(struct tb_k8s_chan *ch)
{
	const char *digits = ch->marker + strlen(TB_K8S_PID_MARKER);
	long pid = 0;
	size_t i;

	for (i = 0; digits[i] >= '0' && digits[i] <= '9' && pid < INT_MAX / 10;
	     i++)
		pid = pid * 10 + (digits[i] - '0');
	ch->pid = i > 0 ? pid : 0;
}

/* stderr bytes while the marker may still be pending. */
static int feed_stderr(struct tb_k8s_chan *ch, const unsigned char *p, size_t n)
{
	const size_t mlen = strlen(TB_K8S_PID_MARKER);

	while (ch->want_marker && n > 0) {
		unsigned char c = *p;
		size_t have = ch->marker_len;

		if (c == '\n' && have > mlen) {
			ch->marker[have] = '\0';
			marker_take(ch);
			ch->want_marker = 0;
			ch->marker_len = 0;
			p++;
			n--;
			break;
		}
		if (have + 1 >= sizeof ch->marker ||
		    (have < mlen &&
		     c != (unsigned char)TB_K8S_PID_MARKER[have]) ||
		    (have >= mlen && (c < '0' || c > '9')))
			return marker_give_up(ch) ? ch->fail
			                          : keep(ch, 1, p, n);
		ch->marker[ch->marker_len++] = (char)c;
		p++;
		n--;
	}
	return n ? keep(ch, 1, p, n) : 0;
}

static int feed_status(struct tb_k8s_chan *ch, const unsigned char *p, size_t n)
{
	char *grown;

	if (ch->status_len >= STATUS_CAP)
		return 0;
	if (n > STATUS_CAP - ch->status_len)
		n = STATUS_CAP - ch->status_len;
	grown = realloc(ch->status, ch->status_len + n + 1);
	if (!grown)
		return ch->fail = TASKBOX_E_NOMEM;
	memcpy(grown + ch->status_len, p, n);
	ch->status = grown;
	ch->status_len += n;
	ch->status[ch->status_len] = '\0';
	return 0;
}

int tb_k8s_chan_feed(struct tb_k8s_chan *ch, const unsigned char *msg,
                     size_t len)
{
	if (ch->fail)
		return ch->fail;
	if (len == 0)
		return 0; /* no channel byte: nothing to route */
	switch (msg[0]) {
	case CH_STDOUT:
		return keep(ch, 0, msg + 1, len - 1);
	case CH_STDERR:
		return feed_stderr(ch, msg + 1, len - 1);
	case CH_ERROR:
		return feed_status(ch, msg + 1, len - 1);
	default:
		/* stdin echo, resize, v5 CLOSE (255): nothing for us. */
		return 0;
	}
}

int tb_k8s_chan_finish(struct tb_k8s_chan *ch)
{
	if (ch->fail)
		return ch->fail;
	if (ch->want_marker && ch->marker_len)
		return marker_give_up(ch);
	ch->want_marker = 0;
	return 0;
}

/* The exit code of a NonZeroExitCode Status: its ExitCode cause. */
static int cause_exit_code(json_t *st, int *exit_code)
{
	json_t *causes =
	    json_object_get(json_object_get(st, "details"), "causes");
	size_t i;
	json_t *cause;

	json_array_foreach(causes, i, cause)
	{
		const char *reason =
		    json_string_value(json_object_get(cause, "reason"));
		const char *m =
		    json_string_value(json_object_get(cause, "message"));
		char *end;
		long v;

		if (!reason || strcmp(reason, "ExitCode") != 0 || !m)
			continue;
		v = strtol(m, &end, 10);
		if (end == m || *end || v < 0 || v > 255)
			return 0;
		*exit_code = (int)v;
		return 1;
	}
	return 0;
}

enum tb_k8s_status_kind tb_k8s_chan_status(const struct tb_k8s_chan *ch,
                                           int *exit_code, char *msg,
                                           size_t msglen)
{
	json_t *st;
	const char *status, *reason, *m;
	enum tb_k8s_status_kind kind;

	*exit_code = -1;
	if (msglen)
		msg[0] = '\0';
	if (!ch->status_len)
		return TB_K8S_ST_NONE;
	st = json_loadb(ch->status, ch->status_len, 0, NULL);
	status = json_string_value(json_object_get(st, "status"));
	reason = json_string_value(json_object_get(st, "reason"));
	m = json_string_value(json_object_get(st, "message"));
	if (!json_is_object(st) || !status) {
		if (msglen)
			snprintf(msg, msglen, "%.200s", ch->status);
		json_decref(st);
		return TB_K8S_ST_BAD;
	}
	if (strcmp(status, "Success") == 0) {
		*exit_code = 0;
		kind = TB_K8S_ST_EXIT;
	} else if (reason && strcmp(reason, "NonZeroExitCode") == 0 &&
	           cause_exit_code(st, exit_code)) {
		kind = TB_K8S_ST_EXIT;
	} else {
		kind = TB_K8S_ST_NOEXIT;
	}
	if (kind != TB_K8S_ST_EXIT && msglen)
		snprintf(msg, msglen, "%s%s%s", reason ? reason : status,
		         m ? ": " : "", m ? m : "");
	json_decref(st);
	return kind;
}

void tb_k8s_chan_free(struct tb_k8s_chan *ch)
{
	free(ch->status);
	ch->status = NULL;
	ch->status_len = 0;
}
