/* JSON-RPC 2.0 over newline-delimited stdio: the line reader, the envelope
 * check, and the response builders. Not thread-safe per object; the
 * builders are reentrant. */
#ifndef TB_JSONRPC_H
#define TB_JSONRPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/rpc_codes.h"

/* The most JSON values (objects, arrays, members, elements, scalars) one
 * message may hold. Past it, parsing would cost far more memory than the
 * message's bytes (an empty object costs jansson over 100 bytes). */
#define TB_RPC_MAX_VALUES 16384

/* What one JSON value costs once parsed, for memory budgets: an estimate
 * from above. */
#define TB_RPC_VALUE_COST 160

/* Counts the JSON values of text without parsing it (every object, array
 * and scalar; a malformed text gets a rough count), stopping once past
 * limit. */
size_t tb_rpc_count_values(const char *text, size_t len, size_t limit);

/* The longest line accepted, newline excluded: 16 MiB. */
#define TB_LINE_MAX ((size_t)16 * 1024 * 1024)

/* Splits a byte stream into lines. Lines longer than max are dropped up to
 * their newline and reported once as TB_LINE_TOO_LONG. */
struct tb_lines {
	char *buf;
	size_t start; /* first byte of the current line */
	size_t scan;  /* bytes before this hold no newline */
	size_t len;   /* bytes held */
	size_t cap;
	size_t max;
	bool skipping; /* inside an over-long line */
	bool eof;
};

enum tb_line_status {
	TB_LINE_NONE = 0,     /* need more input */
	TB_LINE_OK = 1,       /* *line, *len hold one line, no newline */
	TB_LINE_TOO_LONG = 2, /* an over-long line was (or is being) dropped */
};

/* Prepares r for lines of at most max bytes. */
void tb_lines_init(struct tb_lines *r, size_t max);
void tb_lines_free(struct tb_lines *r);

/* Reads once from fd. Returns bytes read, 0 at EOF, -1 on error (errno). */
long tb_lines_fill(struct tb_lines *r, int fd);

/* Appends bytes as if read (for tests and the fuzzer). Returns 0 or -1. */
int tb_lines_feed(struct tb_lines *r, const char *data, size_t n);

/* Marks end of input: a last line without a newline becomes available. */
void tb_lines_finish(struct tb_lines *r);

/* Takes the next complete line. The line stays valid until the next call
 * to any tb_lines function. */
enum tb_line_status tb_lines_next(struct tb_lines *r, const char **line,
                                  size_t *len);

enum tb_rpc_kind {
	TB_RPC_REQUEST,      /* method and id */
	TB_RPC_NOTIFICATION, /* method, no id */
	TB_RPC_RESPONSE,     /* result or error with an id */
	TB_RPC_INVALID,      /* error_code and error_message say why */
};

/* One parsed message. root owns everything; id, method and params borrow
 * from it. id is NULL when absent or unusable. */
struct tb_rpc_msg {
	enum tb_rpc_kind kind;
	json_t *root;
	json_t *id;
	const char *method;
	json_t *params;
	int error_code;
	char error_message[160];
};

/* Parses one line and checks the JSON-RPC 2.0 envelope as MCP restricts it
 * (single object, "jsonrpc":"2.0", id a string or an integer, method a
 * string, params an object). Always fills m; call tb_rpc_msg_clear after. */
void tb_rpc_parse(const char *text, size_t len, struct tb_rpc_msg *m);
/* The same, with the text's tb_rpc_count_values already taken (limit
 * TB_RPC_MAX_VALUES). */
void tb_rpc_parse_counted(const char *text, size_t len, size_t values,
                          struct tb_rpc_msg *m);
void tb_rpc_msg_clear(struct tb_rpc_msg *m);

/* True when lines holds only JSON whitespace. */
bool tb_rpc_blank(const char *text, size_t len);

/* Builds {"jsonrpc":"2.0","id":id,"result":result}; steals result, borrows
 * id (NULL means null). */
json_t *tb_rpc_result(json_t *id, json_t *result);

/* Builds an error response; borrows id (NULL means null). message is
 * printf-style. */
json_t *tb_rpc_error(json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Gives an error response (tb_rpc_error's) its error.data; steals data
 * (NULL: none). Returns err. */
json_t *tb_rpc_error_data(json_t *err, json_t *data);

/* Builds a notification; steals params (may be NULL). */
json_t *tb_rpc_notification(const char *method, json_t *params);

/* Serializes a message as one compact line without the newline; the
 * caller frees. NULL when out of memory. */
char *tb_rpc_dump(const json_t *msg);

/* Serializes a response whose result gets one more member, key, given as
 * JSON text already serialized (raw, trusted to be valid): the same line
 * as tb_rpc_dump would give with that member added last to "result", but
 * without walking the value again. NULL when out of memory. */
char *tb_rpc_dump_with(const json_t *msg, const char *key, const char *raw);

/* A copy of an id usable as a map key: "s:" or "i:" then the value. */
char *tb_rpc_id_key(const json_t *id);

#endif /* TB_JSONRPC_H */
