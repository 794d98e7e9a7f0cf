/* The watch verb's options: the interests of --tasks and the lease. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sup.h"

/* A decimal integer of [P, P + N) from 0 to HIGH, or -1 (leading zeros
 * allowed, as tb_int_option allows them). */
static long long number(const char *p, size_t n, long long high)
{
	long long v = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
		if (v > high)
			return -1;
	}
	return v;
}

/* The rules of an interest's fields after its id, in order. */
static const struct {
	const char *what;
	long long high;
	int dash; /* "-" (not asked for) allowed */
} fields[5] = {{"stdout offset", TB_MAX_OFFSET, 1},
               {"stderr offset", TB_MAX_OFFSET, 1},
               {"page limit", TB_PAGE_LIMIT_MAX, 0},
               {"stdout page offset", TB_MAX_OFFSET, 0},
               {"stderr page offset", TB_MAX_OFFSET, 0}};

/* Parses interest POS (1-based), [P, P + N), into IT. */
static void parse_one(const char *p, size_t n, size_t pos,
                      struct tb_interest *it)
{
	const char *f[6], *end = p + n;
	size_t len[6], k = 0;
	long long *slot[5] = {&it->so, &it->eo, &it->pl, &it->spo, &it->epo};

	for (const char *q = p;; q++) {
		if (q == end || *q == '/') {
			if (k < 6) {
				f[k] = p;
				len[k] = (size_t)(q - p);
			}
			k++;
			p = q + 1;
			if (q == end)
				break;
		}
	}
	if (k != 6)
		tb_refuse(TB_INVALID,
		          "--tasks: interest %zu: must be ID/SO/EO/PL/SPO/EPO",
		          pos);
	if (len[0] != 32 || strspn(f[0], "0123456789abcdef") < 32)
		tb_refuse(TB_INVALID,
		          "--tasks: interest %zu: the id must be 32 lowercase "
		          "hexadecimal characters",
		          pos);
	memcpy(it->id, f[0], 32);
	it->id[32] = '\0';
	for (size_t i = 0; i < 5; i++) {
		if (fields[i].dash && len[i + 1] == 1 && f[i + 1][0] == '-') {
			*slot[i] = -1;
			continue;
		}
		*slot[i] = number(f[i + 1], len[i + 1], fields[i].high);
		if (*slot[i] < 0)
			tb_refuse(TB_INVALID,
			          "--tasks: interest %zu: the %s must be %san "
			          "integer from 0 to %lld",
			          pos, fields[i].what,
			          fields[i].dash ? "'-' or " : "",
			          fields[i].high);
	}
}

void tb_interests_parse(const char *value, struct tb_interest **out, size_t *n)
{
	size_t count = 1, at = 0;
	struct tb_interest *v;

	for (const char *p = value; *p; p++)
		count += *p == ',';
	if (!*value || count > TB_MAX_INTERESTS)
		tb_refuse(TB_INVALID,
		          "--tasks: must hold 1 to %d interests, separated "
		          "by ','",
		          TB_MAX_INTERESTS);
	v = calloc(count, sizeof(*v));
	if (!v)
		tb_oom();
	for (const char *p = value;; at++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		parse_one(p, len, at + 1, &v[at]);
		if (!comma)
			break;
		p = comma + 1;
	}
	*out = v;
	*n = count;
}

long long tb_lease_options(const struct tb_opts *o)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                            "abcdefghijklmnopqrstuvwxyz0123456789_-";
	size_t n;
	long long gen;

	if (!o->lease && !o->generation)
		return -1;
	if (!o->lease)
		tb_refuse(TB_INVALID, "--lease: required with --generation");
	if (!o->generation)
		tb_refuse(TB_INVALID, "--generation: required with --lease");
	n = strlen(o->lease);
	if (n < 1 || n > TB_MAX_LEASE || strspn(o->lease, chars) != n)
		tb_refuse(TB_INVALID,
		          "--lease: must be 1 to %d characters from A-Z, a-z, "
		          "0-9, '_' and '-'",
		          TB_MAX_LEASE);
	gen = number(o->generation, strlen(o->generation), TB_MAX_GENERATION);
	if (gen < 0)
		tb_refuse(TB_INVALID,
		          "--generation: must be an integer from 0 to %lld",
		          TB_MAX_GENERATION);
	return gen;
}
