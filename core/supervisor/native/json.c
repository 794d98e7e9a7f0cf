/* JSON output: a growing byte string, string encoding with the UTF-8 rule
 * of docs/supervisor.md (bytes that are not UTF-8 become U+FFFD). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sup.h"

void tb_str_add(struct tb_str *s, const void *data, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		char *p;

		while (cap < s->len + n + 1)
			cap *= 2;
		p = realloc(s->p, cap);
		if (!p)
			tb_oom();
		s->p = p;
		s->cap = cap;
	}
	if (n)
		memcpy(s->p + s->len, data, n);
	s->len += n;
	s->p[s->len] = '\0';
}

void tb_str_cstr(struct tb_str *s, const char *text)
{
	tb_str_add(s, text, strlen(text));
}

void tb_str_fmt(struct tb_str *s, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		tb_str_add(s, buf,
		           (size_t)n < sizeof(buf) ? (size_t)n
		                                   : sizeof(buf) - 1);
}

void tb_str_free(struct tb_str *s)
{
	free(s->p);
	memset(s, 0, sizeof(*s));
}

size_t tb_utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t need;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		need = 1;
	} else if (c >= 0xE0 && c <= 0xEF) {
		need = 2;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else {
		*bad = 1;
		return 0;
	}
	for (size_t i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xBF;
	}
	return need + 1;
}

size_t tb_utf8_chars(const void *bytes, size_t n)
{
	const unsigned char *s = bytes;
	size_t chars = 0, i = 0, len, bad;

	while (i < n) {
		len = tb_utf8_seq(s + i, n - i, &bad);
		chars += len ? 1 : bad;
		i += len ? len : bad;
	}
	return chars;
}

void tb_json_str(struct tb_str *out, const void *bytes, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = bytes;
	size_t i = 0, run = 0, len, bad;

	tb_str_add(out, "\"", 1);
	while (i < n) {
		unsigned char c = s[i];
		char esc[8];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			run++;
			continue;
		}
		if (c >= 0x80) {
			len = tb_utf8_seq(s + i, n - i, &bad);
			if (len) {
				i += len;
				run += len;
				continue;
			}
		}
		tb_str_add(out, s + i - run, run);
		run = 0;
		if (c >= 0x80) {
			tb_str_add(out, "\xEF\xBF\xBD", 3);
			i += bad;
			continue;
		}
		esc[0] = '\\';
		esc[2] = '\0';
		switch (c) {
		case '"':
			esc[1] = '"';
			break;
		case '\\':
			esc[1] = '\\';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\t':
			esc[1] = 't';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			esc[6] = '\0';
		}
		tb_str_cstr(out, esc);
		i++;
	}
	tb_str_add(out, s + i - run, run);
	tb_str_add(out, "\"", 1);
}

void tb_say(struct tb_str *s)
{
	size_t off = 0;
	ssize_t n;

	tb_str_add(s, "\n", 1);
	while (off < s->len) {
		n = write(1, s->p + off, s->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		off += (size_t)n;
	}
}
