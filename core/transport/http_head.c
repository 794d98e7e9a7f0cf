/* A request head's soundness beyond libmicrohttpd's own checks: field
 * names that are tokens, values without control bytes (RFC 9110 5.5 and
 * 5.6.2), no line folded onto the next (RFC 9112 5.2), and one Host (RFC
 * 9112 3.2).
 *
 * libmicrohttpd 0.9.75 parses the head in place, in its read buffer: it
 * writes a NUL over each line's CR LF and after each name's colon, and
 * gives a value's length as strlen(), so a NUL sent inside a value cuts
 * it and the rest of the line is dropped unseen. Such a rest shows as
 * bytes between the end of a value and the start of the next line: after
 * a value only the NULs of its line end may come (one or two, then the
 * next name; after the last value, the empty line's too). A name or value
 * outside the head was copied there, which libmicrohttpd does for a folded
 * line only. Both are refused. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "transport/http_internal.h"

#define NUL_IN_VALUE "a control character (NUL) in the value"

struct head_walk {
	const char *start, *end; /* the head: request line to empty line */
	const char *after;       /* the end of the previous value, or NULL */
	const char *prev_key;    /* the previous field's name */
	size_t prev_key_size;
	unsigned hosts;
	const char *problem; /* the first one found, or NULL */
	char name[64];       /* the field it was found in, printable */
};

/* Whether c may be in a field name (RFC 9110 5.6.2 tchar). */
static bool is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Whether [from, to) holds only the NULs of line ends (one to max) and
 * blanks (a library that trims a value's trailing blanks leaves them). */
static bool only_line_end(const char *from, const char *to, size_t max)
{
	size_t nuls = 0;

	if (!from || to <= from)
		return false;
	for (const char *p = from; p < to; p++)
		if (*p == '\0')
			nuls++;
		else if (*p != ' ' && *p != '\t')
			return false;
	return nuls >= 1 && nuls <= max;
}

/* Records the first problem, in the field named key. */
static void flag(struct head_walk *w, const char *key, size_t key_size,
                 const char *problem)
{
	size_t n =
	    key_size < sizeof w->name - 1 ? key_size : sizeof w->name - 1;

	if (w->problem)
		return;
	w->problem = problem;
	for (size_t i = 0; i < n; i++)
		w->name[i] = is_tchar((unsigned char)key[i]) ? key[i] : '?';
	w->name[n] = '\0';
}

static bool inside(const struct head_walk *w, const char *p, size_t n)
{
	return p >= w->start && p <= w->end && n <= (size_t)(w->end - p);
}

static enum MHD_Result visit(void *cls, enum MHD_ValueKind kind,
                             const char *key, size_t key_size,
                             const char *value, size_t value_size)
{
	struct head_walk *w = cls;

	(void)kind;
	if (!inside(w, key, key_size) || !inside(w, value, value_size))
		flag(w, key, key_size,
		     "a line folded onto the next (obs-fold)");
	else if (w->after && !only_line_end(w->after, key, 2))
		flag(w, w->prev_key, w->prev_key_size, NUL_IN_VALUE);
	if (key_size == 0)
		flag(w, key, key_size, "an empty field name");
	for (size_t i = 0; i < key_size; i++)
		if (!is_tchar((unsigned char)key[i])) {
			flag(w, key, key_size,
			     "a field name holds only letters, digits and "
			     "!#$%&'*+-.^_`|~ (no space before the colon)");
			break;
		}
	for (size_t i = 0; i < value_size; i++) {
		unsigned char c = (unsigned char)value[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			flag(w, key, key_size,
			     "a control character in the value");
			break;
		}
	}
	if (key_size == 4 && strncasecmp(key, "Host", 4) == 0)
		w->hosts++;
	w->after = value + value_size;
	w->prev_key = key;
	w->prev_key_size = key_size;
	return MHD_YES;
}

bool http_head_sound(struct http_exchange *ex, const char *method,
                     bool need_host, enum MHD_Result *rc)
{
	const union MHD_ConnectionInfo *ci = mhd.get_connection_info(
	    ex->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	struct head_walk w = {.start = method};

	if (!ci) {
		*rc = MHD_NO;
		return false;
	}
	w.end = method + ci->header_size;
	mhd.get_connection_values_n(ex->conn, MHD_HEADER_KIND, visit, &w);
	if (w.after && !only_line_end(w.after, w.end, 4))
		flag(&w, w.prev_key, w.prev_key_size, NUL_IN_VALUE);
	if (w.problem) {
		*rc = http_reply_error(ex, MHD_HTTP_BAD_REQUEST, -32000,
		                       "Bad Request: header %s: %s", w.name,
		                       w.problem);
		return false;
	}
	if (w.hosts > 1 || (need_host && w.hosts == 0)) {
		*rc = http_reply_error(ex, MHD_HTTP_BAD_REQUEST, -32000,
		                       "Bad Request: header Host: %s",
		                       w.hosts ? "given more than once"
		                               : "required");
		return false;
	}
	return true;
}
