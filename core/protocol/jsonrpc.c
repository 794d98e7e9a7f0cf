/* JSON-RPC 2.0 framing and envelope: see jsonrpc.h. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/jsonrpc.h"

#define READ_CHUNK ((size_t)64 * 1024)

void tb_lines_init(struct tb_lines *r, size_t max)
{
	memset(r, 0, sizeof *r);
	r->max = max;
}

void tb_lines_free(struct tb_lines *r)
{
	free(r->buf);
	memset(r, 0, sizeof *r);
}

/* Moves the unread bytes to the front and makes room for want more bytes,
 * never beyond max + 1 + READ_CHUNK. */
static int make_room(struct tb_lines *r, size_t want)
{
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->scan -= r->start;
		r->start = 0;
	}
	if (r->len == 0 && r->cap > 16 * READ_CHUNK) {
		/* Give back the room an over-long line took. */
		free(r->buf);
		r->buf = NULL;
		r->cap = 0;
	}
	if (r->cap - r->len >= want)
		return 0;
	size_t cap = r->cap ? r->cap : READ_CHUNK;
	while (cap - r->len < want)
		cap *= 2;
	char *b = realloc(r->buf, cap);
	if (!b)
		return -1;
	r->buf = b;
	r->cap = cap;
	return 0;
}

long tb_lines_fill(struct tb_lines *r, int fd)
{
	if (make_room(r, READ_CHUNK) < 0) {
		errno = ENOMEM;
		return -1;
	}
	ssize_t n;
	do
		n = read(fd, r->buf + r->len, r->cap - r->len);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		r->len += (size_t)n;
	else if (n == 0)
		tb_lines_finish(r);
	return (long)n;
}

int tb_lines_feed(struct tb_lines *r, const char *data, size_t n)
{
	if (n == 0)
		return 0;
	if (make_room(r, n) < 0)
		return -1;
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return 0;
}

void tb_lines_finish(struct tb_lines *r)
{
	r->eof = true;
}

enum tb_line_status tb_lines_next(struct tb_lines *r, const char **line,
                                  size_t *len)
{
	for (;;) {
		char *nl = r->len > r->scan ? memchr(r->buf + r->scan, '\n',
		                                     r->len - r->scan)
		                            : NULL;
		if (nl) {
			size_t end = (size_t)(nl - r->buf);
			size_t begin = r->start;
			r->start = r->scan = end + 1;
			if (r->skipping) {
				r->skipping = false;
				continue; /* the tail of a reported line */
			}
			if (end - begin > r->max)
				return TB_LINE_TOO_LONG;
			*line = r->buf + begin;
			*len = end - begin;
			return TB_LINE_OK;
		}
		r->scan = r->len;
		if (r->len - r->start > r->max) {
			/* Drop what is held; keep dropping to the newline. */
			bool first = !r->skipping;
			r->start = r->scan = r->len;
			r->skipping = true;
			if (first)
				return TB_LINE_TOO_LONG;
		}
		if (r->eof && r->len > r->start) {
			size_t begin = r->start;
			r->start = r->scan = r->len;
			if (r->skipping) {
				r->skipping = false;
				return TB_LINE_NONE;
			}
			*line = r->buf + begin;
			*len = r->len - begin;
			return TB_LINE_OK;
		}
		return TB_LINE_NONE;
	}
}

bool tb_rpc_blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", text[i]) || text[i] == '\0')
			return false;
	return true;
}

static void set_invalid(struct tb_rpc_msg *m, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_invalid(struct tb_rpc_msg *m, int code, const char *fmt, ...)
{
	va_list ap;

	m->kind = TB_RPC_INVALID;
	m->error_code = code;
	va_start(ap, fmt);
	vsnprintf(m->error_message, sizeof m->error_message, fmt, ap);
	va_end(ap);
}

static bool id_usable(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

size_t tb_rpc_count_values(const char *text, size_t len, size_t limit)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + len;
	size_t n = 1;

	/* A value starts the text and follows each '[', ':' and ','; the
	 * insides of strings are skipped with memchr. */
	while (p < end && n <= limit) {
		unsigned char ch = *p++;

		if (ch == '[' || ch == ':' || ch == ',') {
			n++;
		} else if (ch == '"') {
			for (;;) {
				const unsigned char *q =
				    memchr(p, '"', end - p);
				const unsigned char *b = q;

				if (!q)
					return n;
				while (b > p && b[-1] == '\\')
					b--;
				p = q + 1;
				if ((q - b) % 2 == 0)
					break; /* not escaped */
			}
		}
	}
	return n;
}

void tb_rpc_parse(const char *text, size_t len, struct tb_rpc_msg *m)
{
	tb_rpc_parse_counted(
	    text, len, tb_rpc_count_values(text, len, TB_RPC_MAX_VALUES), m);
}

void tb_rpc_parse_counted(const char *text, size_t len, size_t values,
                          struct tb_rpc_msg *m)
{
	json_error_t jerr;

	memset(m, 0, sizeof *m);
	if (values > TB_RPC_MAX_VALUES) {
		set_invalid(m, TB_RPC_INVALID_REQUEST,
		            "Invalid Request: more than %d JSON values in one "
		            "message",
		            TB_RPC_MAX_VALUES);
		return;
	}
	/* A key given twice is an error, not "the last one wins": two
	 * readers of one message must never see two different requests. */
	m->root = json_loadb(text, len,
	                     JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!m->root) {
		set_invalid(m, TB_RPC_PARSE_ERROR,
		            "Parse error: %s at line %d column %d", jerr.text,
		            jerr.line, jerr.column);
		return;
	}
	if (json_is_array(m->root)) {
		set_invalid(m, TB_RPC_INVALID_REQUEST,
		            "Invalid Request: batch arrays are not supported");
		return;
	}
	if (!json_is_object(m->root)) {
		set_invalid(m, TB_RPC_INVALID_REQUEST,
		            "Invalid Request: a message must be a JSON object");
		return;
	}
	json_t *id = json_object_get(m->root, "id");
	json_t *version = json_object_get(m->root, "jsonrpc");
	json_t *method = json_object_get(m->root, "method");
	json_t *params = json_object_get(m->root, "params");

	if (id_usable(id))
		m->id = id;
	if (!version) {
		set_invalid(m, TB_RPC_INVALID_REQUEST,
		            "Invalid Request: missing field 'jsonrpc' (must be "
		            "\"2.0\")");
		return;
	}
	if (!json_is_string(version) ||
	    strcmp(json_string_value(version), "2.0") != 0) {
		set_invalid(m, TB_RPC_INVALID_REQUEST,
		            "Invalid Request: field 'jsonrpc' must be \"2.0\"");
		return;
	}
	if (id && !id_usable(id)) {
		set_invalid(
		    m, TB_RPC_INVALID_REQUEST,
		    "Invalid Request: field 'id' must be a string or an "
		    "integer");
		return;
	}
	if (!method) {
		if (id && (json_object_get(m->root, "result") ||
		           json_object_get(m->root, "error"))) {
			m->kind = TB_RPC_RESPONSE;
			return;
		}
		set_invalid(m, TB_RPC_INVALID_REQUEST,
		            "Invalid Request: missing field 'method'");
		return;
	}
	if (!json_is_string(method)) {
		set_invalid(m, TB_RPC_INVALID_REQUEST,
		            "Invalid Request: field 'method' must be a string");
		return;
	}
	m->method = json_string_value(method);
	if (params && !json_is_object(params)) {
		set_invalid(m, TB_RPC_INVALID_PARAMS,
		            "Invalid params: field 'params' must be an object");
		if (!id) /* a notification is never answered */
			m->kind = TB_RPC_NOTIFICATION, m->method = NULL;
		return;
	}
	m->params = params;
	m->kind = id ? TB_RPC_REQUEST : TB_RPC_NOTIFICATION;
}

void tb_rpc_msg_clear(struct tb_rpc_msg *m)
{
	json_decref(m->root);
	memset(m, 0, sizeof *m);
}

/* A new message object with jsonrpc and id set. */
static json_t *envelope(json_t *id)
{
	json_t *msg = json_object();
	if (!msg)
		return NULL;
	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	json_object_set(msg, "id", id ? id : json_null());
	return msg;
}

json_t *tb_rpc_result(json_t *id, json_t *result)
{
	json_t *msg = envelope(id);
	if (!msg || !result) {
		json_decref(msg);
		json_decref(result);
		return NULL;
	}
	json_object_set_new(msg, "result", result);
	return msg;
}

json_t *tb_rpc_error_data(json_t *err, json_t *data)
{
	json_t *error = json_object_get(err, "error");

	if (error && data)
		json_object_set_new(error, "data", data);
	else
		json_decref(data);
	return err;
}

json_t *tb_rpc_error(json_t *id, int code, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	json_t *msg = envelope(id);
	if (!msg)
		return NULL;
	/* The text may have been cut inside a UTF-8 sequence: json_stringn
	 * refuses that, so fall back to a byte-safe copy. */
	json_t *message = json_string(text);
	if (!message) {
		for (char *p = text; *p; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
		message = json_string(text);
	}
	json_object_set_new(
	    msg, "error",
	    json_pack("{s:i,s:o}", "code", code, "message", message));
	return msg;
}

json_t *tb_rpc_notification(const char *method, json_t *params)
{
	json_t *msg = json_object();
	if (!msg) {
		json_decref(params);
		return NULL;
	}
	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	json_object_set_new(msg, "method", json_string(method));
	if (params)
		json_object_set_new(msg, "params", params);
	return msg;
}

char *tb_rpc_dump(const json_t *msg)
{
	return json_dumps(msg, JSON_COMPACT);
}

/* True when key is the last member of obj (dumps keep insertion order). */
static bool last_member_is(const json_t *obj, const char *key)
{
	const char *last = NULL;
	for (void *it = json_object_iter((json_t *)obj); it;
	     it = json_object_iter_next((json_t *)obj, it))
		last = json_object_iter_key(it);
	return last && strcmp(last, key) == 0;
}

/* The slow way, for a message not shaped as tb_rpc_result makes it. */
static char *dump_with_parsed(const json_t *msg, const char *key,
                              const char *raw)
{
	json_t *copy = json_deep_copy(msg);
	json_t *value = json_loads(raw, JSON_DECODE_ANY, NULL);
	char *line = NULL;

	if (copy && value &&
	    json_object_set(json_object_get(copy, "result"), key, value) == 0)
		line = json_dumps(copy, JSON_COMPACT);
	json_decref(copy);
	json_decref(value);
	return line;
}

char *tb_rpc_dump_with(const json_t *msg, const char *key, const char *raw)
{
	const json_t *result = json_object_get(msg, "result");
	json_t *kj;
	char *head, *name, *line = NULL;

	if (!json_is_object(result) || !last_member_is(msg, "result") ||
	    json_object_get(result, key))
		return dump_with_parsed(msg, key, raw);
	kj = json_string(key);
	head = json_dumps(msg, JSON_COMPACT);
	name = kj ? json_dumps(kj, JSON_ENCODE_ANY) : NULL;
	json_decref(kj);
	if (head && name) {
		/* head ends with the result's '}' and the envelope's: the
		 * member goes before them. */
		size_t hlen = strlen(head), nlen = strlen(name);
		size_t rlen = strlen(raw), at = hlen - 2;
		bool first = json_object_size(result) == 0;

		line = malloc(hlen + nlen + rlen + 3);
		if (line) {
			char *p = line;
			memcpy(p, head, at);
			p += at;
			if (!first)
				*p++ = ',';
			memcpy(p, name, nlen);
			p += nlen;
			*p++ = ':';
			memcpy(p, raw, rlen);
			memcpy(p + rlen, "}}", 3);
		}
	}
	free(head);
	free(name);
	return line;
}

char *tb_rpc_id_key(const json_t *id)
{
	char *key = NULL;
	if (json_is_string(id)) {
		size_t n = json_string_length(id);
		key = malloc(n + 3);
		if (key) {
			memcpy(key, "s:", 2);
			memcpy(key + 2, json_string_value(id), n);
			key[n + 2] = '\0';
		}
	} else if (json_is_integer(id)) {
		key = malloc(32);
		if (key)
			snprintf(key, 32, "i:%" JSON_INTEGER_FORMAT,
			         json_integer_value(id));
	}
	return key;
}
