/* The metrics registry of metrics.h and its Prometheus rendering. */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tb_metric *first, **last = &first;

void tb_metric_register(struct tb_metric *m)
{
	/* The counters register on every use: once registered, no lock. */
	if (__atomic_load_n(&m->registered, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&registry_lock);
	if (!m->registered) {
		m->next = NULL;
		*last = m;
		last = &m->next;
		__atomic_store_n(&m->registered, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&registry_lock);
}

/* How many label values m has: at least 1 (the unlabelled series). */
static unsigned label_count(const struct tb_metric *m)
{
	unsigned n = 0;

	if (!m->label_values)
		return 1;
	while (n < TB_METRIC_MAX_LABELS && m->label_values[n])
		n++;
	return n ? n : 1;
}

void tb_metric_add(struct tb_metric *m, unsigned label, int64_t delta)
{
	if (label < label_count(m))
		__atomic_add_fetch(&m->value[label], delta, __ATOMIC_RELAXED);
}

int64_t tb_metric_get(struct tb_metric *m, unsigned label)
{
	if (label >= label_count(m))
		return 0;
	return __atomic_load_n(&m->value[label], __ATOMIC_RELAXED);
}

void tb_metric_observe(struct tb_metric *m, unsigned label, double value)
{
	unsigned b = 0, nb = m->n_buckets;
	uint64_t old, next;
	double sum;

	if (label >= label_count(m))
		return;
	if (nb > TB_METRIC_MAX_BUCKETS)
		nb = TB_METRIC_MAX_BUCKETS;
	while (b < nb && value > m->buckets[b])
		b++;
	__atomic_add_fetch(&m->counts[label][b], 1, __ATOMIC_RELAXED);
	old = __atomic_load_n(&m->sum_bits[label], __ATOMIC_RELAXED);
	do {
		memcpy(&sum, &old, sizeof sum);
		sum += value;
		memcpy(&next, &sum, sizeof next);
	} while (!__atomic_compare_exchange_n(&m->sum_bits[label], &old, next,
	                                      true, __ATOMIC_RELAXED,
	                                      __ATOMIC_RELAXED));
}

/* A growing text buffer; failed stays set once an allocation failed. */
struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

static void put(struct text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap + (size_t)n + 1) * 2;
		char *grown = realloc(t->buf, cap);
		if (!grown) {
			t->failed = 1;
			return;
		}
		t->buf = grown;
		t->cap = cap;
	}
}

/* `{label="value"` plus extra (e.g. `,le="0.1"`), closed, or nothing. */
static void labels(struct text *t, const struct tb_metric *m, unsigned i,
                   const char *extra)
{
	bool has = m->label && m->label_values;

	if (!has && !extra)
		return;
	put(t, "{");
	if (has)
		put(t, "%s=\"%s\"", m->label, m->label_values[i]);
	if (extra)
		put(t, "%s%s", has ? "," : "", extra);
	put(t, "}");
}

static void render_histogram(struct text *t, const struct tb_metric *m,
                             unsigned i)
{
	unsigned nb = m->n_buckets < TB_METRIC_MAX_BUCKETS
	                  ? m->n_buckets
	                  : TB_METRIC_MAX_BUCKETS;
	uint64_t total = 0, bits;
	double sum;
	char le[48];

	for (unsigned b = 0; b <= nb; b++) {
		total += __atomic_load_n(&m->counts[i][b], __ATOMIC_RELAXED);
		if (b < nb)
			snprintf(le, sizeof le, "le=\"%g\"", m->buckets[b]);
		else
			snprintf(le, sizeof le, "le=\"+Inf\"");
		put(t, "%s_bucket", m->name);
		labels(t, m, i, le);
		put(t, " %llu\n", (unsigned long long)total);
	}
	bits = __atomic_load_n(&m->sum_bits[i], __ATOMIC_RELAXED);
	memcpy(&sum, &bits, sizeof sum);
	put(t, "%s_sum", m->name);
	labels(t, m, i, NULL);
	put(t, " %.9g\n%s_count", sum, m->name);
	labels(t, m, i, NULL);
	put(t, " %llu\n", (unsigned long long)total);
}

static const char *type_word(enum tb_metric_type type)
{
	return type == TB_METRIC_COUNTER ? "counter"
	       : type == TB_METRIC_GAUGE ? "gauge"
	                                 : "histogram";
}

char *tb_metrics_render(size_t *len)
{
	struct text t = {NULL, 0, 0, 0};

	put(&t, "%s", "");
	pthread_mutex_lock(&registry_lock);
	for (struct tb_metric *m = first; m; m = m->next) {
		put(&t, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help,
		    m->name, type_word(m->type));
		for (unsigned i = 0; i < label_count(m); i++) {
			if (m->type == TB_METRIC_HISTOGRAM) {
				render_histogram(&t, m, i);
				continue;
			}
			put(&t, "%s", m->name);
			labels(&t, m, i, NULL);
			put(&t, " %lld\n", (long long)tb_metric_get(m, i));
		}
	}
	pthread_mutex_unlock(&registry_lock);
	if (t.failed) {
		free(t.buf);
		return NULL;
	}
	if (len)
		*len = t.len;
	return t.buf;
}
