/* The unit-test harness of harness.h. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "tools/test_tools.h"
#include "tools/tools_registry.h"
#include "protocol/workers.h"

static void collect(void *ctx, const char *line, size_t len, bool reply)
{
	struct harness *h = ctx;
	json_error_t err;

	cr_assert(memchr(line, '\n', len) == NULL, "a raw newline in %.*s",
	          (int)len, line);
	json_t *msg = json_loadb(line, len, 0, &err);
	cr_assert(msg, "the server wrote invalid JSON: %s: %.*s", err.text,
	          (int)len, line);
	/* The sink is told which message answers a request. */
	bool response = json_object_get(msg, "method") == NULL;
	cr_assert_eq(reply, response, "reply is %d for %.*s", reply, (int)len,
	             line);
	pthread_mutex_lock(&h->lock);
	json_array_append_new(h->out, msg);
	pthread_cond_broadcast(&h->more);
	pthread_mutex_unlock(&h->lock);
}

void harness_open(struct harness *h, unsigned workers, unsigned queue,
                  bool test_tools)
{
	memset(h, 0, sizeof *h);
	tb_tools_reset();
	cr_assert_eq(tb_test_tools_register(), 0);
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->more, NULL);
	h->out = json_array();
	if (workers)
		h->pool = tb_workers_new(workers, queue);
	struct tb_mcp_opts o = {.write = collect,
	                        .ctx = h,
	                        .pool = h->pool,
	                        .test_tools = test_tools};
	h->session = tb_mcp_new(&o);
	cr_assert(h->session);
}

void harness_close(struct harness *h)
{
	tb_mcp_shutdown(h->session);
	tb_workers_drain(h->pool);
	tb_mcp_free(h->session);
	json_decref(h->out);
	pthread_cond_destroy(&h->more);
	pthread_mutex_destroy(&h->lock);
	tb_tools_reset();
}

void harness_send(struct harness *h, const char *fmt, ...)
{
	va_list ap;
	char *line = NULL;

	va_start(ap, fmt);
	int n = vasprintf(&line, fmt, ap);
	va_end(ap);
	cr_assert(n >= 0);
	tb_mcp_handle_line(h->session, line, (size_t)n);
	free(line);
}

void harness_init(struct harness *h, const char *version)
{
	harness_send(h,
	             "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	             "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":"
	             "{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
	             version);
	json_t *r = harness_answer(h, 0, NULL);
	cr_assert(json_object_get(r, "result"), "initialize failed");
	harness_send(h, "{\"jsonrpc\":\"2.0\",\"method\":"
	                "\"notifications/initialized\"}");
}

json_t *harness_next(struct harness *h)
{
	struct timespec until;
	json_t *msg = NULL;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&h->lock);
	while (h->taken >= json_array_size(h->out))
		if (pthread_cond_timedwait(&h->more, &h->lock, &until))
			break;
	if (h->taken < json_array_size(h->out))
		msg = json_array_get(h->out, h->taken++);
	pthread_mutex_unlock(&h->lock);
	return msg;
}

size_t harness_pending(struct harness *h)
{
	pthread_mutex_lock(&h->lock);
	size_t n = json_array_size(h->out) - h->taken;
	pthread_mutex_unlock(&h->lock);
	return n;
}

json_t *harness_answer(struct harness *h, json_int_t id, int *notes)
{
	json_t *msg;
	while ((msg = harness_next(h))) {
		json_t *mid = json_object_get(msg, "id");
		if (!mid && notes)
			(*notes)++;
		if (json_is_integer(mid) && json_integer_value(mid) == id)
			return msg;
	}
	cr_assert_fail("no answer to id %lld", (long long)id);
	return NULL;
}
