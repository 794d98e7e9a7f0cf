/* JSON input: a strict validating scanner for status records. It keeps the
 * top-level members as raw spans; the verbs print records as saved. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sup.h"

#define MAX_DEPTH 64

struct scan {
	const char *p, *end;
	const char *why;
};

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
	                         *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int fail(struct scan *s, const char *why)
{
	s->why = why;
	return -1;
}

static int hex4(const char *p)
{
	for (int i = 0; i < 4; i++)
		if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
			return 0;
	return 1;
}

/* A string at s->p (on its opening quote); leaves s->p after it. */
static int scan_string(struct scan *s)
{
	size_t len, bad;

	s->p++;
	while (s->p < s->end) {
		unsigned char c = (unsigned char)*s->p;

		if (c == '"') {
			s->p++;
			return 0;
		}
		if (c < 0x20)
			return fail(s, "control character in a string");
		if (c == '\\') {
			if (s->end - s->p < 2)
				break;
			c = (unsigned char)s->p[1];
			if (c == 'u') {
				if (s->end - s->p < 6 || !hex4(s->p + 2))
					return fail(s, "bad \\u escape");
				s->p += 6;
			} else if (strchr("\"\\/bfnrt", c) && c) {
				s->p += 2;
			} else {
				return fail(s, "bad escape");
			}
			continue;
		}
		if (c >= 0x80) {
			len = tb_utf8_seq((const unsigned char *)s->p,
			                  (size_t)(s->end - s->p), &bad);
			if (!len)
				return fail(s, "not UTF-8");
			s->p += len;
			continue;
		}
		s->p++;
	}
	return fail(s, "unterminated string");
}

static int scan_digits(struct scan *s)
{
	const char *start = s->p;

	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return s->p > start ? 0 : fail(s, "bad number");
}

/* A number; *is_int tells whether it has no fraction and no exponent. */
static int scan_number(struct scan *s, int *is_int)
{
	*is_int = 1;
	if (*s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if (scan_digits(s) < 0)
		return -1;
	if (s->p < s->end && *s->p == '.') {
		*is_int = 0;
		s->p++;
		if (scan_digits(s) < 0)
			return -1;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		*is_int = 0;
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (scan_digits(s) < 0)
			return -1;
	}
	return 0;
}

static int scan_value(struct scan *s, int depth, enum tb_jtype *type,
                      struct tb_jobject *top);

static int scan_word(struct scan *s, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return fail(s, "unexpected character");
	s->p += n;
	return 0;
}

/* An object or array at s->p; TOP collects an object's members. */
static int scan_container(struct scan *s, int depth, struct tb_jobject *top)
{
	char close = *s->p == '{' ? '}' : ']';
	enum tb_jtype type;

	if (depth > MAX_DEPTH)
		return fail(s, "nested too deeply");
	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		return 0;
	}
	for (;;) {
		struct tb_jmember m = {0};

		skip_ws(s);
		if (close == '}') {
			if (s->p >= s->end || *s->p != '"')
				return fail(s, "expected a member name");
			m.key = s->p + 1;
			if (scan_string(s) < 0)
				return -1;
			m.key_len = (size_t)(s->p - 1 - m.key);
			skip_ws(s);
			if (s->p >= s->end || *s->p != ':')
				return fail(s, "expected ':'");
			s->p++;
			skip_ws(s);
		}
		m.val = s->p;
		if (scan_value(s, depth + 1, &type, NULL) < 0)
			return -1;
		m.val_len = (size_t)(s->p - m.val);
		m.type = type;
		if (top && top->n < TB_JMEMBERS_MAX)
			top->m[top->n++] = m;
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == close) {
			s->p++;
			return 0;
		}
		return fail(s, "expected ',' or a closing bracket");
	}
}

static int scan_value(struct scan *s, int depth, enum tb_jtype *type,
                      struct tb_jobject *top)
{
	int is_int;

	skip_ws(s);
	if (s->p >= s->end)
		return fail(s, "unexpected end");
	switch (*s->p) {
	case '"':
		*type = TB_J_STR;
		return scan_string(s);
	case '{':
		*type = TB_J_OBJ;
		return scan_container(s, depth, top);
	case '[':
		*type = TB_J_ARR;
		return scan_container(s, depth, NULL);
	case 't':
		*type = TB_J_BOOL;
		return scan_word(s, "true");
	case 'f':
		*type = TB_J_BOOL;
		return scan_word(s, "false");
	case 'n':
		*type = TB_J_NULL;
		return scan_word(s, "null");
	default:
		if (*s->p != '-' && (*s->p < '0' || *s->p > '9'))
			return fail(s, "unexpected character");
		if (scan_number(s, &is_int) < 0)
			return -1;
		*type = is_int ? TB_J_INT : TB_J_NUM;
		return 0;
	}
}

int tb_jobject_parse(const char *text, size_t len, struct tb_jobject *o,
                     const char **why)
{
	struct scan s = {text, text + len, NULL};
	enum tb_jtype type;

	o->n = 0;
	skip_ws(&s);
	if (s.p >= s.end || *s.p != '{') {
		*why = "not an object";
		return -1;
	}
	if (scan_value(&s, 0, &type, o) < 0) {
		*why = s.why;
		return -1;
	}
	skip_ws(&s);
	if (s.p != s.end) {
		*why = "extra data after the object";
		return -1;
	}
	return 0;
}

const struct tb_jmember *tb_jget(const struct tb_jobject *o, const char *key)
{
	size_t n = strlen(key);

	for (size_t i = o->n; i-- > 0;)
		if (o->m[i].key_len == n && memcmp(o->m[i].key, key, n) == 0)
			return &o->m[i];
	return NULL;
}

long long tb_jint(const struct tb_jobject *o, const char *key)
{
	const struct tb_jmember *m = tb_jget(o, key);
	char buf[32];

	if (!m || m->type != TB_J_INT || m->val_len >= sizeof(buf) ||
	    m->val_len > 19)
		return TB_NULL;
	memcpy(buf, m->val, m->val_len);
	buf[m->val_len] = '\0';
	return strtoll(buf, NULL, 10);
}

int tb_jstr_is(const struct tb_jobject *o, const char *key, const char *want)
{
	const struct tb_jmember *m = tb_jget(o, key);
	size_t n = strlen(want);

	/* The verbs compare with plain ASCII words, which a writer has no
	 * reason to escape; an escaped spelling does not compare equal. */
	return m && m->type == TB_J_STR && m->val_len == n + 2 &&
	       memcmp(m->val + 1, want, n) == 0;
}
