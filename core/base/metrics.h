/* Process-wide metrics: atomic counters, gauges and fixed-bucket
 * histograms, each with at most one label drawn from a small fixed set of
 * values, rendered in the Prometheus text format. A layer declares its
 * metrics as static objects (TB_COUNTER, TB_GAUGE, TB_HISTOGRAM), registers
 * each once, and updates them from any thread without a lock. */
#ifndef TB_METRICS_H
#define TB_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define TB_METRIC_MAX_LABELS 32  /* values of a metric's one label */
#define TB_METRIC_MAX_BUCKETS 16 /* upper bounds of a histogram */

enum tb_metric_type {
	TB_METRIC_COUNTER,
	TB_METRIC_GAUGE,
	TB_METRIC_HISTOGRAM,
};

struct tb_metric {
	const char *name; /* e.g. "taskbox_http_requests_total" */
	const char *help;
	enum tb_metric_type type;
	const char *label;               /* the label's name, or NULL */
	const char *const *label_values; /* NULL-terminated; NULL: no label */
	const double *buckets;           /* histograms: increasing bounds */
	unsigned n_buckets;
	/* Storage, per label value: counters and gauges use value[], a
	 * histogram counts[] (one per bucket, then +Inf) and sum_bits. */
	int64_t value[TB_METRIC_MAX_LABELS];
	uint64_t counts[TB_METRIC_MAX_LABELS][TB_METRIC_MAX_BUCKETS + 1];
	uint64_t sum_bits[TB_METRIC_MAX_LABELS]; /* a double's bits */
	struct tb_metric *next;                  /* registered list */
	int registered;
};

#define TB_COUNTER(n, h, l, lv)                                                \
	{                                                                      \
		.name = (n), .help = (h), .type = TB_METRIC_COUNTER,           \
		.label = (l), .label_values = (lv)                             \
	}
#define TB_GAUGE(n, h, l, lv)                                                  \
	{                                                                      \
		.name = (n), .help = (h), .type = TB_METRIC_GAUGE,             \
		.label = (l), .label_values = (lv)                             \
	}
#define TB_HISTOGRAM(n, h, l, lv, b, nb)                                       \
	{                                                                      \
		.name = (n), .help = (h), .type = TB_METRIC_HISTOGRAM,         \
		.label = (l), .label_values = (lv), .buckets = (b),            \
		.n_buckets = (nb)                                              \
	}

/* Adds m to the rendered set; a later call does nothing and takes no
 * lock, so a counter may call it on every use. Thread-safe. */
void tb_metric_register(struct tb_metric *m);

/* Adds delta to a counter (delta >= 0) or a gauge, for the label value at
 * index label (0 without a label). Out-of-range labels are ignored. */
void tb_metric_add(struct tb_metric *m, unsigned label, int64_t delta);

/* Counts one observation of a histogram. */
void tb_metric_observe(struct tb_metric *m, unsigned label, double value);

/* The current value of a counter or gauge. */
int64_t tb_metric_get(struct tb_metric *m, unsigned label);

/* Every registered metric in the Prometheus text format (version 0.0.4),
 * in registration order; the caller frees. NULL when out of memory. */
char *tb_metrics_render(size_t *len);

#endif /* TB_METRICS_H */
