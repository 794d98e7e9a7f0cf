/* Ownership (ABI 1.5): the owner a sandbox was made for lives in its E2B
 * metadata (TB_E2B_META_OWNER), beside the tag that marks it as taskbox's.
 * The API sets metadata at create; nothing inside the sandbox can change it.
 * This file reads a sandbox object of the API into what describe and list
 * answer, and writes the metadata query list asks with. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b_int.h"

int tb_e2b_valid_owner(const char *owner)
{
	const unsigned char *p = (const unsigned char *)owner;
	size_t i = 0, len;
	int more;

	if (!owner)
		return 0;
	len = strlen(owner);
	if (len < 1 || len > TASKBOX_OWNER_MAX - 1)
		return 0;
	while (i < len) {
		unsigned c = p[i];
		unsigned cp;
		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return 0;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			more = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			more = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			more = 3;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (i + (size_t)more >= len)
			return 0;
		for (int k = 1; k <= more; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		/* Overlong forms, surrogates, past U+10FFFF, C1 controls. */
		if ((more == 2 && cp < 0x800) || (more == 3 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
		    (cp >= 0x80 && cp <= 0x9f))
			return 0;
		i += (size_t)more + 1;
	}
	return 1;
}

/* Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* n decimal digits at s into *out; 0 or -1. */
static int digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int tb_e2b_parse_time(const char *s, int64_t *out)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	const char *p;

	if (!s || strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' ||
	    digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d) ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) ||
	    s[16] != ':' || digits(s + 17, 2, &sec))
		return -1;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		if (digits(p + 1, 2, &oh) || p[3] != ':' ||
		    digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return -1;
		p += 6;
	} else {
		return -1;
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return -1;
	*out = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 +
	       h * 3600 + mi * 60 + sec - sign * (oh * 3600 + om * 60);
	return 0;
}

int tb_e2b_info_from_json(json_t *sbx, char *id, struct tb_e2b_info *info)
{
	const char *sid = json_string_value(json_object_get(sbx, "sandboxID"));
	const char *state = json_string_value(json_object_get(sbx, "state"));
	json_t *meta = json_object_get(sbx, "metadata");
	const char *tag =
	    json_string_value(json_object_get(meta, TB_E2B_META_TAG));
	json_t *owner = json_object_get(meta, TB_E2B_META_OWNER);
	int64_t t;
	int ours;

	memset(info, 0, sizeof *info);
	id[0] = '\0';
	if (tb_e2b_valid_id(sid))
		snprintf(id, TASKBOX_SANDBOX_ID_MAX, "%s", sid);
	if (tb_e2b_parse_time(
	        json_string_value(json_object_get(sbx, "startedAt")), &t) == 0)
		info->created_s = t;
	/* A paused sandbox's endAt is when it was paused: it has no expiry
	 * until it runs again. */
	if ((!state || strcmp(state, "paused") != 0) &&
	    tb_e2b_parse_time(json_string_value(json_object_get(sbx, "endAt")),
	                      &t) == 0)
		info->expires_s = t;
	ours = id[0] && tag && strcmp(tag, TB_E2B_META_TAG_VALUE) == 0;
	if (ours && owner) {
		if (!tb_e2b_valid_owner(json_string_value(owner)))
			return 0;
		snprintf(info->owner, sizeof info->owner, "%s",
		         json_string_value(owner));
	}
	return ours;
}

void tb_e2b_info_out(const char *id, const struct tb_e2b_info *info,
                     struct taskbox_sandbox_info *out)
{
	struct taskbox_sandbox_info full;
	size_t size = out->struct_size;

	memset(&full, 0, sizeof full);
	snprintf(full.id, sizeof full.id, "%s", id);
	snprintf(full.owner, sizeof full.owner, "%s", info->owner);
	full.created_s = info->created_s;
	full.expires_s = info->expires_s;
	if (size > sizeof full)
		size = sizeof full;
	if (size > sizeof full.struct_size)
		memcpy((char *)out + sizeof full.struct_size,
		       (char *)&full + sizeof full.struct_size,
		       size - sizeof full.struct_size);
}

char *tb_e2b_pct(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = malloc(strlen(s) * 3 + 1), *o = out;

	for (; out && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr("-._~", c)) {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	if (out)
		*o = '\0';
	return out;
}

/* pct applied n times. */
static char *pct_n(const char *s, int n)
{
	char *cur = strdup(s), *next;

	while (cur && n-- > 0) {
		next = tb_e2b_pct(cur);
		free(cur);
		cur = next;
	}
	return cur;
}

/* Appends "k=v" (each escaped twice) to *q, after a '&' when *q is not
 * empty. 0 or -1 on no memory. */
static int add_pair(char **q, const char *k, const char *v)
{
	char *ek = pct_n(k, 2), *ev = pct_n(v, 2), *grown = NULL;
	size_t n;

	if (ek && ev) {
		n = strlen(*q) + strlen(ek) + strlen(ev) + 3;
		grown = realloc(*q, n);
		if (grown) {
			snprintf(grown + strlen(grown), n - strlen(grown),
			         "%s%s=%s", grown[0] ? "&" : "", ek, ev);
			*q = grown;
		}
	}
	free(ek);
	free(ev);
	return grown ? 0 : -1;
}

/* The API unescapes the parameter, then the whole query, then each key and
 * value (the SDK escapes them as many times): "k=v&k2=v2" with every key
 * and value escaped twice, the whole escaped once more. */
char *tb_e2b_metadata_query(const char *owner)
{
	char *q = calloc(1, 1), *out;

	if (!q || add_pair(&q, TB_E2B_META_TAG, TB_E2B_META_TAG_VALUE) != 0 ||
	    (owner && *owner && add_pair(&q, TB_E2B_META_OWNER, owner) != 0)) {
		free(q);
		return NULL;
	}
	out = tb_e2b_pct(q);
	free(q);
	return out;
}
