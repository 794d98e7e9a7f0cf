/* docker provider: ownership (ABI 1.5). A sandbox's owner is the container
 * label TB_DK_LABEL_PRINCIPAL, set at create: labels cannot change after
 * create and are not visible inside the container. describe answers from
 * what connect learnt (its inspect and the state file), with no request. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "docker.h"

/* Length of the UTF-8 sequence at p (n bytes left) whose code point is not
 * a control character, or 0 when it is malformed or a control. */
static size_t utf8_char(const unsigned char *p, size_t n)
{
	uint32_t cp;
	size_t len;

	if (p[0] < 0x80)
		return p[0] >= 0x20 && p[0] != 0x7f;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0; /* overlong, too large, or a surrogate */
	return cp >= 0x80 && cp <= 0x9f ? 0 : len; /* C1 controls */
}

int tb_dk_owner_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), k;

	if (n == 0 || n >= TASKBOX_OWNER_MAX)
		return 0;
	for (size_t i = 0; i < n; i += k)
		if (!(k = utf8_char(p + i, n - i)))
			return 0;
	return 1;
}

int tb_dk_owner_check(const char *owner, char *errbuf, size_t errlen)
{
	if (tb_dk_owner_valid(owner))
		return TASKBOX_OK;
	return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
	                  "create: owner must be 1 to %d bytes of UTF-8 "
	                  "without control characters",
	                  TASKBOX_OWNER_MAX - 1);
}

void tb_dk_owner_from_labels(json_t *labels, char out[TASKBOX_OWNER_MAX])
{
	const char *v =
	    json_string_value(json_object_get(labels, TB_DK_LABEL_PRINCIPAL));

	out[0] = '\0';
	if (v && tb_dk_owner_valid(v))
		memcpy(out, v, strlen(v) + 1);
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

int64_t tb_dk_parse_time(const char *s)
{
	int y, mo, d, h, mi, sec, n = 0, zh, zm;
	int64_t t;

	if (!s ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec,
	           &n) != 6 ||
	    !n || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60 || y < 1970)
		return 0;
	s += n;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	if (!strcmp(s, "Z"))
		return t;
	if ((*s != '+' && *s != '-') ||
	    sscanf(s + 1, "%2d:%2d%n", &zh, &zm, &n) != 2 || s[1 + n] ||
	    zh > 23 || zm > 59)
		return 0;
	/* Local time = UTC + offset. */
	return *s == '+' ? t - (zh * 3600 + zm * 60)
	                 : t + (zh * 3600 + zm * 60);
}

/* Whether info (of struct_size bytes) holds field f. */
#define HAS(info, f)                                                           \
	((info)->struct_size >=                                                \
	 offsetof(struct taskbox_sandbox_info, f) + sizeof((info)->f))

void tb_dk_fill_info(struct taskbox_sandbox_info *info, const char *id,
                     const char *owner, int64_t created, int64_t expires)
{
	if (HAS(info, id))
		snprintf(info->id, sizeof(info->id), "%s", id);
	if (HAS(info, owner))
		snprintf(info->owner, sizeof(info->owner), "%s", owner);
	if (HAS(info, created_s))
		info->created_s = created;
	if (HAS(info, expires_s))
		info->expires_s = expires;
}

int tb_dk_describe(void *conn, struct taskbox_sandbox_info *info, char *errbuf,
                   size_t errlen)
{
	struct tb_dk_conn *c = conn;

	(void)errbuf;
	(void)errlen;
	tb_dk_fill_info(info, c->id, c->owner, c->created, c->deadline);
	return TASKBOX_OK;
}
