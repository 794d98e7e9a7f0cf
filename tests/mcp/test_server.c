/* tb_serve over real pipes: end of input, signals, over-long lines and
 * the shutdown hooks. */
#include "config.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "transport/server.h"
#include "tools/test_tools.h"
#include "tools/tools_registry.h"

struct running {
	int to_server, from_server;
	pthread_t thread;
	struct tb_serve_opts opts;
	int rc;
};

static char hook_order[8];

static void hook_a(void)
{
	strcat(hook_order, "a");
}

static void hook_b(void)
{
	strcat(hook_order, "b");
}

static void *serve_thread(void *arg)
{
	struct running *r = arg;
	r->rc = tb_serve(&r->opts);
	close(r->opts.out_fd);
	close(r->opts.in_fd);
	return NULL;
}

static void start(struct running *r)
{
	int in[2], out[2];
	tb_tools_reset();
	cr_assert_eq(tb_test_tools_register(), 0);
	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	r->opts = (struct tb_serve_opts){in[0], out[1], 2, true};
	r->to_server = in[1];
	r->from_server = out[0];
	hook_order[0] = '\0';
	tb_server_on_shutdown(hook_a);
	tb_server_on_shutdown(hook_b);
	cr_assert_eq(pthread_create(&r->thread, NULL, serve_thread, r), 0);
}

static void put(struct running *r, const char *text)
{
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t n = write(r->to_server, text + off, len - off);
		cr_assert_gt(n, 0);
		off += (size_t)n;
	}
}

/* Reads one line of output (at most cap - 1 bytes). */
static bool get(struct running *r, char *buf, size_t cap)
{
	size_t len = 0;
	while (len < cap - 1) {
		ssize_t n = read(r->from_server, buf + len, 1);
		if (n <= 0)
			return false;
		if (buf[len] == '\n')
			break;
		len++;
	}
	buf[len] = '\0';
	return true;
}

static void finish(struct running *r)
{
	pthread_join(r->thread, NULL);
	cr_assert_eq(r->rc, 0);
	cr_assert_str_eq(hook_order, "ba", "hooks run in reverse order");
	close(r->from_server);
	tb_tools_reset();
}

static const char init_line[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}\n"
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

Test(server, end_of_input_finishes_calls_then_runs_hooks)
{
	struct running r;
	char line[4096];

	start(&r);
	put(&r, init_line);
	put(&r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"test_simple_text\"}}\n"
	        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
	close(r.to_server); /* the last line has no newline */
	bool got1 = false, got2 = false;
	while (get(&r, line, sizeof line)) {
		got1 = got1 || strstr(line, "\"id\":1,\"result\"");
		got2 = got2 || strstr(line, "\"id\":2,\"result\":{}");
	}
	cr_assert(got1 && got2);
	finish(&r);
}

Test(server, sigterm_cancels_calls_in_flight)
{
	struct running r;
	char line[4096];

	start(&r);
	put(&r, init_line);
	cr_assert(get(&r, line, sizeof line));
	put(&r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"test_sleep\",\"arguments\":{\"ms\":"
	        "600000},\"_meta\":{\"progressToken\":1}}}\n");
	cr_assert(get(&r, line, sizeof line)); /* progress: it runs */
	kill(getpid(), SIGTERM);
	bool answered = false;
	while (get(&r, line, sizeof line))
		answered = answered || strstr(line, "\"cancelled\":true");
	cr_assert(answered, "the call ended with cancelled: true");
	close(r.to_server);
	finish(&r);
}

Test(server, an_overlong_line_is_answered_and_skipped)
{
	struct running r;
	char line[4096];
	size_t big = 17u * 1024 * 1024;
	char *junk = malloc(big + 1);

	memset(junk, ' ', big);
	memcpy(junk, "{\"a\":\"", 6);
	junk[big] = '\0';
	start(&r);
	put(&r, init_line);
	cr_assert(get(&r, line, sizeof line));
	put(&r, junk);
	put(&r, "\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\n");
	cr_assert(get(&r, line, sizeof line));
	cr_assert(strstr(line, "\"code\":-32600"), "%s", line);
	cr_assert(get(&r, line, sizeof line));
	cr_assert(strstr(line, "\"id\":5,\"result\":{}"), "%s", line);
	close(r.to_server);
	while (get(&r, line, sizeof line))
		;
	finish(&r);
	free(junk);
}

/* Reads the next line that is not a progress notification. */
static bool get_answer(struct running *r, char *buf, size_t cap)
{
	while (get(r, buf, cap))
		if (!strstr(buf, "notifications/progress"))
			return true;
	return false;
}

/* The reading moves between threads (workers.h): with every call thread
 * busy it must stay with a thread that reads, so ping is answered, and a
 * further call waits for a thread instead of stopping the reading. */
Test(server, the_reader_stays_free_while_every_worker_is_busy, .timeout = 60)
{
	struct running r;
	char line[4096];

	start(&r); /* 2 workers */
	put(&r, init_line);
	cr_assert(get(&r, line, sizeof line));
	/* A first call leaves an idle thread, so call 1 runs on the thread
	 * that reads it, and the reading must move on. */
	put(&r, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"test_simple_text\"}}\n");
	cr_assert(get_answer(&r, line, sizeof line));
	cr_assert(strstr(line, "\"id\":9,\"result\""), "%s", line);
	for (int id = 1; id <= 2; id++) {
		char call[256];
		snprintf(call, sizeof call,
		         "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
		         "\"tools/call\",\"params\":{\"name\":\"test_sleep\","
		         "\"arguments\":{\"ms\":600000},\"_meta\":{"
		         "\"progressToken\":%d}}}\n",
		         id, id);
		put(&r, call);
		cr_assert(get(&r, line, sizeof line)); /* progress: it runs */
		cr_assert(strstr(line, "\"progressToken\":") &&
		              line[strlen(line) - 1] == '}',
		          "%s", line);
	}
	put(&r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"test_simple_text\"}}\n"
	        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n");
	cr_assert(get_answer(&r, line, sizeof line));
	cr_assert(strstr(line, "\"id\":4,\"result\":{}"),
	          "ping is answered first: %s", line);
	/* Cancelling call 1 frees a thread for call 3. */
	put(&r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	        "\"params\":{\"requestId\":1}}\n");
	cr_assert(get_answer(&r, line, sizeof line));
	cr_assert(strstr(line, "\"id\":3,\"result\""), "%s", line);
	close(r.to_server); /* the end cancels call 2, which still answers */
	bool answered = false;
	while (get(&r, line, sizeof line))
		answered = answered || (strstr(line, "\"id\":2,") &&
		                        strstr(line, "\"cancelled\":true"));
	cr_assert(answered, "call 2 ended with cancelled: true");
	finish(&r);
}
