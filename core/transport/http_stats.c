/* The HTTP transport's own metrics, rendered at /metrics with every other
 * layer's (base/metrics.h). */
#include "config.h"

#include "base/metrics.h"
#include "transport/http_internal.h"

static const char *const classes[] = {"1xx", "2xx", "3xx", "4xx", "5xx", NULL};
static const char *const cut_reasons[] = {"deadline", "unauthenticated_cap",
                                          NULL};
static const double duration_buckets[] = {0.001, 0.005, 0.025, 0.1,
                                          0.5,   2.5,   10,    60};

static struct tb_metric requests =
    TB_COUNTER("taskbox_http_requests_total",
               "HTTP requests answered, by status class.", "class", classes);
static struct tb_metric durations = TB_HISTOGRAM(
    "taskbox_http_request_duration_seconds",
    "Time from a request's headers to the end of its answer.", "class", classes,
    duration_buckets, sizeof duration_buckets / sizeof *duration_buckets);
static struct tb_metric connections = TB_GAUGE(
    "taskbox_http_connections_open", "HTTP connections open.", NULL, NULL);
static struct tb_metric sessions =
    TB_GAUGE("taskbox_http_sessions_open",
             "MCP sessions (Mcp-Session-Id) open.", NULL, NULL);
static struct tb_metric inflight =
    TB_GAUGE("taskbox_http_requests_in_flight",
             "POST requests received and not yet answered.", NULL, NULL);
static struct tb_metric cuts =
    TB_COUNTER("taskbox_http_connections_cut_total",
               "HTTP connections shut down: past their header or body "
               "deadline, or past the cap of unauthenticated ones.",
               "reason", cut_reasons);

static struct tb_metric unsent = TB_GAUGE(
    "taskbox_http_answer_bytes_unsent",
    "Bytes of answers not yet taken by their clients (with those being "
    "built), held against $.http.answer_budget_mib.",
    NULL, NULL);
static struct tb_metric refused =
    TB_COUNTER("taskbox_http_answers_refused_total",
               "Large answers refused (a tool error instead) because "
               "they would have passed the budget of unsent answers.",
               NULL, NULL);

void http_stats_register(void)
{
	tb_metric_register(&requests);
	tb_metric_register(&durations);
	tb_metric_register(&connections);
	tb_metric_register(&sessions);
	tb_metric_register(&inflight);
	tb_metric_register(&unsent);
	tb_metric_register(&refused);
	tb_metric_register(&cuts);
}

static unsigned class_of(unsigned status)
{
	return status >= 100 && status < 600 ? status / 100 - 1 : 4;
}

void http_stats_response(unsigned status)
{
	tb_metric_add(&requests, class_of(status), 1);
}

void http_stats_duration(unsigned status, double seconds)
{
	tb_metric_observe(&durations, class_of(status), seconds);
}

void http_stats_connections(int delta)
{
	tb_metric_add(&connections, 0, delta);
}

void http_stats_sessions(int delta)
{
	tb_metric_add(&sessions, 0, delta);
}

void http_stats_inflight(int delta)
{
	tb_metric_add(&inflight, 0, delta);
}

void http_stats_unsent(int64_t delta)
{
	tb_metric_add(&unsent, 0, delta);
}

void http_stats_answer_refused(void)
{
	tb_metric_add(&refused, 0, 1);
}

void http_stats_cut(unsigned late, unsigned evicted)
{
	if (late)
		tb_metric_add(&cuts, 0, late);
	if (evicted)
		tb_metric_add(&cuts, 1, evicted);
}
