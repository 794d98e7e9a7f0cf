/* pods/exec over WebSocket (channel.k8s.io v5, else v4). libcurl makes the
 * connection (CONNECT_ONLY: TCP, TLS with the cluster's CA and client
 * certificate, a proxy tunnel); this file writes the upgrade request with
 * curl_easy_send, reads the 101 with curl_easy_recv and checks it, then
 * lets libwslay frame the messages over the same connection: pings are
 * answered, the close frame is awaited, and each data message goes to the
 * channel decoder. */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include <wslay/wslay.h>

#include "k8s_int.h"

#define HEAD_CAP (64 * 1024)
#define ERR_BODY_CAP (64 * 1024)
#define STDIN_CHUNK (32 * 1024)
#define MAX_RECV_MSG (16u * 1024 * 1024)
#define PING_EVERY_MS 20000u
#define MAX_429_RETRIES 3
#define MAX_RETRY_AFTER_S 10

struct ws {
	struct tb_k8s *inst;
	CURL *easy;
	curl_socket_t sock;
	unsigned char *pre; /* bytes read past the handshake */
	size_t pre_len, pre_off;
	int eof, ioerr, v5, status_seen;
	char ioerr_msg[160];
	struct tb_k8s_exec_io *io;
	size_t stdin_off;
	int stdin_closed;
};

/* What a refused upgrade said. */
struct refusal {
	long status;
	long retry_after;
	char body[ERR_BODY_CAP];
	size_t len;
};

uint64_t tb_k8s_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits up to ms for the socket to be readable (or writable). */
static void wait_socket(curl_socket_t s, int for_write, int ms)
{
	struct pollfd p = {s, (short)(for_write ? POLLOUT : POLLIN), 0};

	(void)poll(&p, 1, ms);
}

static int send_all(struct ws *w, const char *p, size_t n, uint64_t deadline)
{
	while (n > 0) {
		size_t sent = 0;
		CURLcode cc = curl_easy_send(w->easy, p, n, &sent);
		if (cc == CURLE_AGAIN) {
			if (tb_k8s_now_ms() > deadline)
				return -1;
			wait_socket(w->sock, 1, 100);
			continue;
		}
		if (cc != CURLE_OK)
			return -1;
		p += sent;
		n -= sent;
	}
	return 0;
}

/* Reads into buf until the head's blank line; *head_len gets its end. */
static int read_head(struct ws *w, char *buf, size_t cap, size_t *len,
                     size_t *head_len, uint64_t deadline)
{
	char *end;

	*len = 0;
	for (;;) {
		size_t got = 0;
		CURLcode cc;

		buf[*len] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end) {
			*head_len = (size_t)(end - buf) + 4;
			return 0;
		}
		if (*len + 1 >= cap)
			return -1;
		cc = curl_easy_recv(w->easy, buf + *len, cap - 1 - *len, &got);
		if (cc == CURLE_AGAIN) {
			if (tb_k8s_now_ms() > deadline)
				return -1;
			wait_socket(w->sock, 0, 100);
			continue;
		}
		if (cc != CURLE_OK || got == 0)
			return -1;
		*len += got;
	}
}

/* The value of header name in head (lines after the status line), copied
 * into out; 0 when present. */
static int header(const char *head, const char *name, char *out, size_t outlen)
{
	size_t nlen = strlen(name);
	const char *line = strstr(head, "\r\n");

	while (line && line[2] != '\r') {
		line += 2;
		if (strncasecmp(line, name, nlen) == 0 && line[nlen] == ':') {
			const char *v = line + nlen + 1, *e = strstr(v, "\r\n");
			size_t n;
			while (*v == ' ' || *v == '\t')
				v++;
			n = e ? (size_t)(e - v) : strlen(v);
			if (n >= outlen)
				n = outlen - 1;
			memcpy(out, v, n);
			out[n] = '\0';
			return 0;
		}
		line = strstr(line, "\r\n");
	}
	return -1;
}

/* Reads the body of a refused upgrade (Content-Length, else to EOF),
 * bounded by the cap and the deadline. */
static void read_refusal_body(struct ws *w, const char *head, const char *rest,
                              size_t restlen, struct refusal *r,
                              uint64_t deadline)
{
	char v[32];
	long want = -1;

	if (header(head, "Content-Length", v, sizeof v) == 0)
		want = strtol(v, NULL, 10);
	if (restlen >= sizeof r->body)
		restlen = sizeof r->body - 1;
	memcpy(r->body, rest, restlen);
	r->len = restlen;
	while (r->len + 1 < sizeof r->body &&
	       (want < 0 || (long)r->len < want)) {
		size_t got = 0;
		CURLcode cc = curl_easy_recv(w->easy, r->body + r->len,
		                             sizeof r->body - 1 - r->len, &got);
		if (cc == CURLE_AGAIN) {
			if (tb_k8s_now_ms() > deadline)
				break;
			wait_socket(w->sock, 0, 100);
			continue;
		}
		if (cc != CURLE_OK || got == 0)
			break;
		r->len += got;
	}
	r->body[r->len] = '\0';
}

/* The request line's target and the Host header from the server URL. */
static int target_parts(const char *server, char *host, size_t hostlen,
                        char *prefix, size_t prefixlen)
{
	CURLU *u = curl_url();
	char *h = NULL, *port = NULL, *path = NULL;
	int rc = -1;

	if (!u || curl_url_set(u, CURLUPART_URL, server, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK)
		goto out;
	curl_url_get(u, CURLUPART_PORT, &port, 0);
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	snprintf(host, hostlen, "%s%s%s", h, port ? ":" : "", port ? port : "");
	snprintf(prefix, prefixlen, "%s",
	         path && strcmp(path, "/") ? path : "");
	rc = 0;
out:
	curl_free(h);
	curl_free(port);
	curl_free(path);
	curl_url_cleanup(u);
	return rc;
}

/* Connects and upgrades. TASKBOX_OK with w->easy ready; or a refusal
 * (r->status set, TASKBOX_OK returned, no connection kept); or an ABI
 * code. */
static int upgrade(struct ws *w, const char *target, struct refusal *r,
                   char *errbuf, size_t errlen)
{
	struct tb_k8s *inst = w->inst;
	uint64_t deadline = tb_k8s_now_ms() + inst->request_timeout_s * 1000u;
	char host[300], prefix[512], auth[8192], key[32], accept[32],
	    got_accept[64], proto[64], cerr[CURL_ERROR_SIZE] = "";
	unsigned char nonce[16];
	char *req = NULL, *head = NULL;
	size_t len = 0, head_len = 0, reqcap;
	long status = 0;
	CURLcode cc;
	int rc = TASKBOX_OK;

	r->status = 0;
	r->retry_after = -1;
	if (target_parts(inst->cl.server, host, sizeof host, prefix,
	                 sizeof prefix) != 0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INVALID,
		                   "the server URL %s cannot be parsed",
		                   inst->cl.server);
	w->easy = curl_easy_init();
	if (!w->easy)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	tb_k8s_curl_setup(inst, w->easy);
	curl_easy_setopt(w->easy, CURLOPT_URL, inst->cl.server);
	curl_easy_setopt(w->easy, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(w->easy, CURLOPT_ERRORBUFFER, cerr);
	if (inst->cl.proxy)
		curl_easy_setopt(w->easy, CURLOPT_HTTPPROXYTUNNEL, 1L);
	cc = curl_easy_perform(w->easy);
	curl_easy_setopt(w->easy, CURLOPT_ERRORBUFFER, NULL);
	if (cc != CURLE_OK)
		return tb_k8s_fail(
		    errbuf, errlen,
		    cc == CURLE_OPERATION_TIMEDOUT ? TASKBOX_E_TIMEOUT
		                                   : TASKBOX_E_UNAVAILABLE,
		    "cannot reach the apiserver at %s for exec: %s",
		    inst->cl.server, cerr[0] ? cerr : curl_easy_strerror(cc));
	if (curl_easy_getinfo(w->easy, CURLINFO_ACTIVESOCKET, &w->sock) !=
	        CURLE_OK ||
	    w->sock == CURL_SOCKET_BAD)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INTERNAL,
		                   "libcurl gave no socket for exec");

	if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_INTERNAL,
		                   "no random bytes for the WebSocket key");
	tb_k8s_ws_key(nonce, key);
	tb_k8s_ws_accept(key, accept);
	tb_k8s_auth_header(&inst->cl, auth, sizeof auth);
	reqcap = strlen(prefix) + strlen(target) + strlen(auth) + 1024;
	req = malloc(reqcap);
	head = malloc(HEAD_CAP);
	if (!req || !head) {
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                 "out of memory");
		goto out;
	}
	snprintf(req, reqcap,
	         "GET %s%s HTTP/1.1\r\n"
	         "Host: %s\r\n"
	         "User-Agent: taskbox-k8s/" PACKAGE_VERSION "\r\n"
	         "Upgrade: websocket\r\n"
	         "Connection: Upgrade\r\n"
	         "Sec-WebSocket-Version: 13\r\n"
	         "Sec-WebSocket-Key: %s\r\n"
	         "Sec-WebSocket-Protocol: v5.channel.k8s.io, "
	         "v4.channel.k8s.io\r\n"
	         "%s%s"
	         "\r\n",
	         prefix, target, host, key, auth, auth[0] ? "\r\n" : "");
	memset(auth, 0, sizeof auth);
	if (send_all(w, req, strlen(req), deadline) != 0 ||
	    read_head(w, head, HEAD_CAP, &len, &head_len, deadline) != 0) {
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_UNAVAILABLE,
		                 "exec: the apiserver at %s closed or stalled "
		                 "the upgrade request",
		                 inst->cl.server);
		goto out;
	}
	if (sscanf(head, "HTTP/1.%*d %ld", &status) != 1) {
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                 "exec: the apiserver's answer is not HTTP");
		goto out;
	}
	if (status != 101) {
		char v[32];
		head[head_len - 2] = '\0';
		r->status = status;
		if (header(head, "Retry-After", v, sizeof v) == 0)
			r->retry_after = strtol(v, NULL, 10);
		read_refusal_body(w, head, head + head_len, len - head_len, r,
		                  deadline);
		goto out;
	}
	head[head_len - 2] = '\0';
	if (header(head, "Sec-WebSocket-Accept", got_accept,
	           sizeof got_accept) != 0 ||
	    strcmp(got_accept, accept) != 0) {
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                 "exec: the upgrade's Sec-WebSocket-Accept is "
		                 "missing or wrong");
		goto out;
	}
	if (header(head, "Sec-WebSocket-Protocol", proto, sizeof proto) != 0 ||
	    (strcmp(proto, "v5.channel.k8s.io") != 0 &&
	     strcmp(proto, "v4.channel.k8s.io") != 0)) {
		rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_PROTOCOL,
		                 "exec: the apiserver chose no channel.k8s.io "
		                 "v4/v5 subprotocol");
		goto out;
	}
	w->v5 = strcmp(proto, "v5.channel.k8s.io") == 0;
	if (len > head_len) {
		w->pre = malloc(len - head_len);
		if (!w->pre) {
			rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
			                 "out of memory");
			goto out;
		}
		memcpy(w->pre, head + head_len, len - head_len);
		w->pre_len = len - head_len;
	}
out:
	free(req);
	free(head);
	return rc;
}

/* ---- wslay's callbacks ---- */

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
                       int flags, void *user)
{
	struct ws *w = user;
	size_t got = 0;
	CURLcode cc;

	(void)flags;
	if (w->pre_off < w->pre_len) {
		size_t n = w->pre_len - w->pre_off;
		if (n > len)
			n = len;
		memcpy(buf, w->pre + w->pre_off, n);
		w->pre_off += n;
		return (ssize_t)n;
	}
	cc = curl_easy_recv(w->easy, buf, len, &got);
	if (cc == CURLE_AGAIN) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (cc != CURLE_OK) {
		w->ioerr = 1;
		snprintf(w->ioerr_msg, sizeof w->ioerr_msg, "%s",
		         curl_easy_strerror(cc));
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	if (got == 0) {
		w->eof = 1;
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return (ssize_t)got;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data,
                       size_t len, int flags, void *user)
{
	struct ws *w = user;
	size_t sent = 0;
	CURLcode cc;

	(void)flags;
	cc = curl_easy_send(w->easy, data, len, &sent);
	if (cc == CURLE_AGAIN) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (cc != CURLE_OK) {
		w->ioerr = 1;
		snprintf(w->ioerr_msg, sizeof w->ioerr_msg, "%s",
		         curl_easy_strerror(cc));
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return (ssize_t)sent;
}

static int ws_genmask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
                      void *user)
{
	(void)ctx;
	(void)user;
	if (getrandom(buf, len, 0) != (ssize_t)len)
		return -1;
	return 0;
}

static void ws_on_msg(wslay_event_context_ptr ctx,
                      const struct wslay_event_on_msg_recv_arg *arg, void *user)
{
	struct ws *w = user;

	(void)ctx;
	if (arg->opcode != WSLAY_BINARY_FRAME &&
	    arg->opcode != WSLAY_TEXT_FRAME)
		return;
	if (arg->msg_length > 0 && arg->msg[0] == 3)
		w->status_seen = 1;
	tb_k8s_chan_feed(w->io->chan, arg->msg, arg->msg_length);
}

/* Queues stdin while wslay's queue is short; on v5 ends it with CLOSE. */
static int feed_stdin(struct ws *w, wslay_event_context_ptr ctx)
{
	struct tb_k8s_exec_io *io = w->io;

	if (!io->stdin_data || w->stdin_closed)
		return 0;
	while (w->stdin_off < io->stdin_len &&
	       wslay_event_get_queued_msg_count(ctx) < 4) {
		size_t n = io->stdin_len - w->stdin_off;
		unsigned char *frame;
		struct wslay_event_msg m;
		int rc;

		if (n > STDIN_CHUNK)
			n = STDIN_CHUNK;
		frame = malloc(n + 1);
		if (!frame)
			return -1;
		frame[0] = 0;
		memcpy(frame + 1, io->stdin_data + w->stdin_off, n);
		m.opcode = WSLAY_BINARY_FRAME;
		m.msg = frame;
		m.msg_length = n + 1;
		rc = wslay_event_queue_msg(ctx, &m); /* copies the message */
		free(frame);
		if (rc != 0)
			return -1;
		w->stdin_off += n;
	}
	if (w->stdin_off == io->stdin_len) {
		static const uint8_t close_stdin[2] = {255, 0};
		struct wslay_event_msg m = {WSLAY_BINARY_FRAME, close_stdin, 2};
		if (w->v5 && wslay_event_queue_msg(ctx, &m) != 0)
			return -1;
		w->stdin_closed = 1;
	}
	return 0;
}

/* Runs the framed conversation to the close frame. */
static int converse(struct ws *w, char *errbuf, size_t errlen)
{
	struct wslay_event_callbacks cb = {ws_recv, ws_send, ws_genmask, NULL,
	                                   NULL,    NULL,    ws_on_msg};
	wslay_event_context_ptr ctx;
	struct tb_k8s_exec_io *io = w->io;
	uint64_t next_ping = tb_k8s_now_ms() + PING_EVERY_MS;
	int rc = TASKBOX_OK;

	if (wslay_event_context_client_init(&ctx, &cb, w) != 0)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	wslay_event_config_set_max_recv_msg_length(ctx, MAX_RECV_MSG);
	for (;;) {
		struct pollfd p;
		int r;

		if (feed_stdin(w, ctx) != 0) {
			rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
			                 "out of memory");
			break;
		}
		if (wslay_event_want_read(ctx) &&
		    (r = wslay_event_recv(ctx)) != 0) {
			if (w->eof && w->status_seen)
				break; /* closed after its Status: complete */
			if (w->eof || w->ioerr)
				rc = tb_k8s_fail(
				    errbuf, errlen, TASKBOX_E_IO,
				    "exec: the stream from the apiserver broke "
				    "off before the command's status came "
				    "(%s); "
				    "the command may still be running",
				    w->ioerr ? w->ioerr_msg
				             : "connection closed");
			else
				rc = tb_k8s_fail(
				    errbuf, errlen,
				    r == WSLAY_ERR_NOMEM ? TASKBOX_E_NOMEM
				                         : TASKBOX_E_PROTOCOL,
				    "exec: bad WebSocket framing "
				    "from the apiserver (wslay %d)",
				    r);
			break;
		}
		if (io->chan->fail) {
			rc = tb_k8s_fail(errbuf, errlen, io->chan->fail,
			                 "exec: out of memory for the output");
			break;
		}
		if (wslay_event_want_write(ctx) &&
		    (r = wslay_event_send(ctx)) != 0) {
			if (w->status_seen &&
			    wslay_event_get_close_received(ctx))
				break;
			rc = tb_k8s_fail(
			    errbuf, errlen, TASKBOX_E_IO,
			    "exec: the stream to the apiserver "
			    "broke off (%s); the command may still "
			    "be running",
			    w->ioerr ? w->ioerr_msg : "send failed");
			break;
		}
		if (!wslay_event_want_read(ctx) && !wslay_event_want_write(ctx))
			break; /* both close frames went: the clean end */
		if (wslay_event_get_close_received(ctx) &&
		    !wslay_event_want_write(ctx))
			break;
		if (io->tick && (rc = io->tick(io->tick_ctx)) != TASKBOX_OK) {
			tb_k8s_fail(errbuf, errlen, rc,
			            rc == TASKBOX_E_CANCELLED
			                ? "exec: cancelled"
			                : "exec: abandoned");
			break;
		}
		if (io->deadline_ms && tb_k8s_now_ms() > io->deadline_ms) {
			rc = tb_k8s_fail(errbuf, errlen, TASKBOX_E_TIMEOUT,
			                 "exec: no end of the stream in time; "
			                 "the outcome is unknown");
			break;
		}
		if (tb_k8s_now_ms() >= next_ping) {
			struct wslay_event_msg m = {WSLAY_PING, NULL, 0};
			wslay_event_queue_msg(ctx, &m);
			next_ping = tb_k8s_now_ms() + PING_EVERY_MS;
		}
		p.fd = w->sock;
		p.events = POLLIN;
		if (wslay_event_want_write(ctx))
			p.events |= POLLOUT;
		p.revents = 0;
		(void)poll(&p, 1, w->pre_off < w->pre_len ? 0 : 100);
	}
	wslay_event_context_free(ctx);
	return rc;
}

/* The query: one command= per argument, the container, the streams. */
static char *exec_target(const struct tb_k8s_conn *c, const char *const *argv,
                         int with_stdin)
{
	size_t cap = 512, len;
	char *t, *esc;
	size_t i;

	for (i = 0; argv[i]; i++)
		cap += strlen(argv[i]) * 3 + 10;
	t = malloc(cap);
	if (!t)
		return NULL;
	len = (size_t)snprintf(
	    t, cap,
	    "/api/v1/namespaces/%s/pods/%s/exec?container=" TB_K8S_CONTAINER
	    "&stdout=true&stderr=true%s",
	    c->inst->namespace, c->pod, with_stdin ? "&stdin=true" : "");
	for (i = 0; argv[i]; i++) {
		esc = curl_easy_escape(NULL, argv[i], (int)strlen(argv[i]));
		if (!esc) {
			free(t);
			return NULL;
		}
		len += (size_t)snprintf(t + len, cap - len, "&command=%s", esc);
		curl_free(esc);
	}
	return t;
}

/* The ABI code and message for a refused upgrade. */
static int refused(const struct tb_k8s_conn *c, const struct refusal *r,
                   char *errbuf, size_t errlen)
{
	char msg[400];

	tb_k8s_status_message(r->body, r->len, msg, sizeof msg);
	if (r->status == 403)
		return tb_k8s_fail(
		    errbuf, errlen, TASKBOX_E_PERMISSION,
		    "exec in pod %s: HTTP 403: %s; grant the verbs get and "
		    "create on pods/exec in namespace %s to taskbox's user "
		    "(see the k8s plugin's README for the Role)",
		    c->pod, msg[0] ? msg : "forbidden", c->inst->namespace);
	if (r->status == 401)
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_AUTH,
		                   "exec in pod %s: HTTP 401: the apiserver "
		                   "rejected the credentials (%s)",
		                   c->pod, msg[0] ? msg : "no message");
	return tb_k8s_fail(errbuf, errlen, tb_k8s_http_code(r->status),
	                   "exec in pod %s: HTTP %ld: %s", c->pod, r->status,
	                   msg[0] ? msg : "no message");
}

/* Sleeps s seconds, polling io's tick every 100 ms; its code, or OK. */
static int pause_ticking(struct tb_k8s_exec_io *io, long s)
{
	uint64_t until = tb_k8s_now_ms() + (uint64_t)s * 1000u;
	int rc;

	while (tb_k8s_now_ms() < until) {
		if (io->tick && (rc = io->tick(io->tick_ctx)) != TASKBOX_OK)
			return rc;
		usleep(100000);
	}
	return TASKBOX_OK;
}

int tb_k8s_ws_exec(struct tb_k8s_conn *c, const char *const *argv,
                   struct tb_k8s_exec_io *io, char *errbuf, size_t errlen)
{
	struct refusal *r = malloc(sizeof *r);
	char *target = exec_target(c, argv, io->stdin_data != NULL);
	int rc = TASKBOX_OK, tries_429 = 0, reauthed = 0;
	struct ws w;

	if (!r || !target) {
		free(r);
		free(target);
		return tb_k8s_fail(errbuf, errlen, TASKBOX_E_NOMEM,
		                   "out of memory");
	}
	for (;;) {
		memset(&w, 0, sizeof w);
		w.inst = c->inst;
		w.io = io;
		w.sock = CURL_SOCKET_BAD;
		rc = upgrade(&w, target, r, errbuf, errlen);
		if (rc == TASKBOX_OK && r->status == 0) {
			rc = converse(&w, errbuf, errlen);
			break;
		}
		curl_easy_cleanup(w.easy);
		free(w.pre);
		w.easy = NULL;
		w.pre = NULL;
		if (rc != TASKBOX_OK)
			break;
		if (r->status == 401 && !reauthed &&
		    tb_k8s_token_reload(&c->inst->cl)) {
			reauthed = 1;
			continue;
		}
		if (r->status == 429 && tries_429 < MAX_429_RETRIES) {
			long s = r->retry_after < 1 ? 1 : r->retry_after;
			tries_429++;
			rc = pause_ticking(
			    io, s > MAX_RETRY_AFTER_S ? MAX_RETRY_AFTER_S : s);
			if (rc != TASKBOX_OK) {
				tb_k8s_fail(
				    errbuf, errlen, rc,
				    "exec: cancelled while the apiserver "
				    "asked to slow down");
				break;
			}
			continue;
		}
		rc = refused(c, r, errbuf, errlen);
		break;
	}
	if (w.easy)
		curl_easy_cleanup(w.easy);
	free(w.pre);
	free(r);
	free(target);
	return rc;
}
