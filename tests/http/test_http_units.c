/* The pure pieces of the HTTP transport: the Origin and Host allow-lists,
 * listen addresses, the metrics text and the config's "http" section (the
 * tokens and challenges are test_http_auth.c's). */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/listen_addr.h"
#include "base/metrics.h"
#include "host/config_file.h"
#include "transport/http_policy.h"

Test(http_policy, default_origins_are_loopback)
{
	cr_assert(tb_http_origin_allowed("http://localhost", NULL, 0));
	cr_assert(tb_http_origin_allowed("http://localhost:5173", NULL, 0));
	cr_assert(tb_http_origin_allowed("https://127.0.0.1:8443", NULL, 0));
	cr_assert(tb_http_origin_allowed("http://[::1]:3000", NULL, 0));
	cr_assert(tb_http_origin_allowed("HTTP://LOCALHOST", NULL, 0));
	cr_assert_not(tb_http_origin_allowed("https://evil.example", NULL, 0));
	cr_assert_not(
	    tb_http_origin_allowed("http://localhost.evil.example", NULL, 0));
	cr_assert_not(tb_http_origin_allowed("null", NULL, 0));
	cr_assert_not(tb_http_origin_allowed("ftp://localhost", NULL, 0));
	cr_assert_not(tb_http_origin_allowed("http://localhost/x", NULL, 0));
}

Test(http_policy, configured_origins)
{
	static const char *const list[] = {"https://app.example.com",
	                                   "http://dev.example:8080"};

	cr_assert(tb_http_origin_allowed("https://app.example.com", list, 2));
	cr_assert(
	    tb_http_origin_allowed("https://app.example.com:444", list, 2));
	cr_assert(tb_http_origin_allowed("http://dev.example:8080", list, 2));
	cr_assert_not(
	    tb_http_origin_allowed("http://dev.example:8081", list, 2));
	cr_assert_not(
	    tb_http_origin_allowed("http://app.example.com", list, 2));
	cr_assert_not(tb_http_origin_allowed("http://localhost", list, 2));
}

Test(http_policy, hosts)
{
	static const char *const list[] = {"mcp.example.com", "10.0.0.5:9000"};

	cr_assert(tb_http_host_allowed("localhost:8080", NULL, 0, NULL));
	cr_assert(tb_http_host_allowed("127.0.0.1", NULL, 0, NULL));
	cr_assert(tb_http_host_allowed("[::1]:1", NULL, 0, NULL));
	cr_assert(tb_http_host_allowed("LocalHost:80", NULL, 0, NULL));
	cr_assert_not(tb_http_host_allowed("evil.example", NULL, 0, NULL));
	cr_assert_not(
	    tb_http_host_allowed("localhost.evil.example", NULL, 0, NULL));
	cr_assert_not(tb_http_host_allowed("localhost:x", NULL, 0, NULL));
	cr_assert(
	    tb_http_host_allowed("0.0.0.0:7000", NULL, 0, "0.0.0.0:7000"));
	cr_assert_not(
	    tb_http_host_allowed("0.0.0.0:7001", NULL, 0, "0.0.0.0:7000"));
	cr_assert(tb_http_host_allowed("mcp.example.com:443", list, 2, NULL));
	cr_assert(tb_http_host_allowed("10.0.0.5:9000", list, 2, NULL));
	cr_assert_not(tb_http_host_allowed("10.0.0.5:9001", list, 2, NULL));
	cr_assert_not(tb_http_host_allowed("localhost", list, 2, NULL));
}

Test(listen_addr, forms)
{
	struct tb_listen_addr a;
	char why[160], text[64];

	cr_assert_eq(tb_listen_addr_parse("8080", &a, why, sizeof why), 0);
	cr_assert_str_eq(a.addr, "127.0.0.1");
	cr_assert_eq(a.port, 8080);
	cr_assert(tb_listen_addr_loopback(&a));
	cr_assert_eq(tb_listen_addr_parse("0", &a, why, sizeof why), 0);
	cr_assert_eq(a.port, 0);
	cr_assert_eq(tb_listen_addr_parse("0.0.0.0:80", &a, why, sizeof why),
	             0);
	cr_assert_not(tb_listen_addr_loopback(&a));
	cr_assert_eq(tb_listen_addr_parse("localhost:1", &a, why, sizeof why),
	             0);
	cr_assert_str_eq(a.addr, "127.0.0.1");
	cr_assert_eq(tb_listen_addr_parse("[::1]:9", &a, why, sizeof why), 0);
	cr_assert(a.ipv6);
	cr_assert(tb_listen_addr_loopback(&a));
	tb_listen_addr_format(&a, 41234, text, sizeof text);
	cr_assert_str_eq(text, "[::1]:41234");
	cr_assert_eq(tb_listen_addr_parse("[::]:9", &a, why, sizeof why), 0);
	cr_assert_not(tb_listen_addr_loopback(&a));
	const char *bad[] = {
	    "",         "65536",   "-1",      "x:80",
	    "::1:80",   "[::1]",   "[::1]80", "1.2.3:80",
	    "1.2.3.4:", "[zz]:80", "80a",     "1.2.3.4:999999"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cr_assert_eq(tb_listen_addr_parse(bad[i], &a, why, sizeof why),
		             -1, "accepted \"%s\"", bad[i]);
		cr_assert(strstr(why, "[ADDR:]PORT"));
	}
}

static const char *const colours[] = {"red", "blue", NULL};
static const double bounds[] = {1, 10};
static struct tb_metric counter =
    TB_COUNTER("test_things_total", "Things counted.", "colour", colours);
static struct tb_metric gauge =
    TB_GAUGE("test_open", "Things open.", NULL, NULL);
static struct tb_metric histogram =
    TB_HISTOGRAM("test_seconds", "Durations.", NULL, NULL, bounds, 2);

Test(metrics, prometheus_text)
{
	size_t len;
	char *text;

	tb_metric_register(&counter);
	tb_metric_register(&counter);
	tb_metric_register(&gauge);
	tb_metric_register(&histogram);
	tb_metric_add(&counter, 1, 3);
	tb_metric_add(&counter, 7, 1); /* no such label: ignored */
	tb_metric_add(&gauge, 0, 2);
	tb_metric_add(&gauge, 0, -1);
	tb_metric_observe(&histogram, 0, 0.5);
	tb_metric_observe(&histogram, 0, 5);
	tb_metric_observe(&histogram, 0, 50);
	text = tb_metrics_render(&len);
	cr_assert_not_null(text);
	cr_assert_eq(strlen(text), len);
	cr_assert(strstr(text, "# HELP test_things_total Things counted.\n"
	                       "# TYPE test_things_total counter\n"
	                       "test_things_total{colour=\"red\"} 0\n"
	                       "test_things_total{colour=\"blue\"} 3\n"),
	          "%s", text);
	cr_assert(strstr(text, "# TYPE test_open gauge\ntest_open 1\n"), "%s",
	          text);
	cr_assert(strstr(text, "test_seconds_bucket{le=\"1\"} 1\n"
	                       "test_seconds_bucket{le=\"10\"} 2\n"
	                       "test_seconds_bucket{le=\"+Inf\"} 3\n"
	                       "test_seconds_sum 55.5\n"
	                       "test_seconds_count 3\n"),
	          "%s", text);
	const char *first = strstr(text, "# TYPE test_things_total");
	cr_assert_null(strstr(first + 1, "# TYPE test_things_total"),
	               "registered twice:\n%s", text);
	free(text);
}

#define BASE "{\"default\":\"l\",\"providers\":{\"l\":{\"plugin\":\"local\"}},"

Test(config_http, accepts_and_copies)
{
	char err[2048];
	struct tb_config *cfg = tb_config_parse(
	    BASE "\"http\":{\"listen\":\"[::1]:0\",\"path\":\"/x\","
	         "\"token_env\":\"MY_TOKENS\",\"token_file\":\"t.txt\","
	         "\"allowed_origins\":[\"https://a.example\"],"
	         "\"allowed_hosts\":[\"a.example:443\"],\"session_idle_s\":5,"
	         "\"idle_timeout_s\":2,\"max_connections\":10,"
	         "\"max_inflight\":3,\"tls\":{\"cert\":\"c\",\"key\":\"k\"}}}",
	    "t.json", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_str_eq(cfg->http->listen, "[::1]:0");
	cr_assert_str_eq(cfg->http->path, "/x");
	cr_assert_str_eq(cfg->http->token_env, "MY_TOKENS");
	cr_assert_eq(cfg->http->n_allowed_origins, 1);
	cr_assert_str_eq(cfg->http->allowed_hosts[0], "a.example:443");
	cr_assert_eq(cfg->http->session_idle_s, 5);
	cr_assert_eq(cfg->http->max_inflight, 3);
	cr_assert_str_eq(cfg->http->tls_key, "k");
	tb_config_free(cfg);
}

Test(config_http, names_each_bad_field)
{
	char err[4096];
	struct tb_config *cfg = tb_config_parse(
	    BASE "\"http\":{\"listen\":\"1.2.3:80\",\"path\":\"mcp\","
	         "\"token\":\"inline\",\"token_env\":\"1BAD\","
	         "\"allowed_origins\":[\"a.example\"],"
	         "\"allowed_hosts\":\"x\",\"session_idle_s\":0,"
	         "\"max_connections\":\"many\",\"tls\":{\"cert\":\"c\"}}}",
	    "t.json", err, sizeof err);
	const char *want[] = {
	    "$.http.listen: must be [ADDR:]PORT",
	    "$.http.path: must be a URL path",
	    "$.http.token: tokens are never written in the config",
	    "$.http.token_env: must be an environment variable name",
	    "$.http.allowed_origins[0]: must be an origin",
	    "$.http.allowed_hosts: must be an array of strings",
	    "$.http.session_idle_s: must be an integer 1..604800",
	    "$.http.max_connections: must be an integer 1..1000000",
	    "$.http.tls.key: required",
	};

	cr_assert_null(cfg);
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		cr_assert(strstr(err, want[i]), "missing \"%s\" in:\n%s",
		          want[i], err);
}

Test(config_http, answer_budget_in_mib)
{
	char err[4096];
	struct tb_config *cfg =
	    tb_config_parse(BASE "\"http\":{\"answer_budget_mib\":48}}",
	                    "t.json", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_eq(cfg->http->answer_budget_mib, 48);
	tb_config_free(cfg);
	const char *bad[] = {"0", "1048577", "\"64\"", "1.5"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char text[256];
		snprintf(text, sizeof text,
		         BASE "\"http\":{\"answer_budget_mib\":%s}}", bad[i]);
		cfg = tb_config_parse(text, "t.json", err, sizeof err);
		cr_assert_null(cfg, "answer_budget_mib %s accepted", bad[i]);
		cr_assert(strstr(err, "$.http.answer_budget_mib: must be an "
		                      "integer 1..1048576"),
		          "%s: %s", bad[i], err);
	}
}

Test(config_http, deadlines_and_the_unauthenticated_cap)
{
	char err[2048];
	struct tb_config *cfg = tb_config_parse(
	    BASE "\"http\":{\"header_timeout_s\":3,\"body_timeout_s\":20,"
	         "\"max_connections\":100,\"max_unauthenticated\":40}}",
	    "t.json", err, sizeof err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_eq(cfg->http->header_timeout_s, 3);
	cr_assert_eq(cfg->http->body_timeout_s, 20);
	cr_assert_eq(cfg->http->max_unauthenticated, 40);
	tb_config_free(cfg);
}

Test(config_http, names_bad_deadlines_and_cap)
{
	char err[2048];
	struct tb_config *cfg = tb_config_parse(
	    BASE "\"http\":{\"header_timeout_s\":0,\"body_timeout_s\":\"1\","
	         "\"max_connections\":100,\"max_unauthenticated\":100}}",
	    "t.json", err, sizeof err);
	const char *want[] = {
	    "$.http.header_timeout_s: must be an integer 1..3600",
	    "$.http.body_timeout_s: must be an integer 1..3600",
	    "$.http.max_unauthenticated: must be less than max_connections "
	    "(100)",
	};

	cr_assert_null(cfg);
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		cr_assert(strstr(err, want[i]), "missing \"%s\" in:\n%s",
		          want[i], err);
	cfg = tb_config_parse(BASE "\"http\":{\"max_unauthenticated\":2048}}",
	                      "t.json", err, sizeof err);
	cr_assert_null(cfg);
	cr_assert(strstr(err, "less than max_connections (2048)"), "%s", err);
}
