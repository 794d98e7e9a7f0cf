/* Unit tests of the k8s plugin's pure parts: the channel decoder (stdout,
 * stderr, the pid marker, the Status on channel 3, limits), the WebSocket
 * accept value, kubeconfig parsing, sandbox ids, times and the objects. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../plugins/k8s/k8s_int.h"
#include "../common/quiet_host.h"

/* Feeds one message: the channel byte then the text. */
static int feed(struct tb_k8s_chan *ch, int channel, const char *text)
{
	size_t n = strlen(text);
	unsigned char *m = malloc(n + 1);
	int rc;

	m[0] = (unsigned char)channel;
	memcpy(m + 1, text, n);
	rc = tb_k8s_chan_feed(ch, m, n + 1);
	free(m);
	return rc;
}

static void res_free(struct taskbox_exec_result *res)
{
	free(res->out.data);
	free(res->err.data);
}

Test(channels, streams_apart_and_success)
{
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	struct tb_k8s_chan ch;
	int code;
	char msg[200];

	tb_k8s_chan_init(&ch, &quiet_host, &res, 0, 0);
	cr_assert_eq(feed(&ch, 1, ""), 0); /* the empty first frame */
	feed(&ch, 1, "out1 ");
	feed(&ch, 2, "err");
	feed(&ch, 1, "out2");
	feed(&ch, 3, "{\"metadata\":{},\"status\":\"Success\"}");
	cr_assert_eq(tb_k8s_chan_finish(&ch), 0);
	cr_assert_eq(res.out.len, 9);
	cr_assert_arr_eq(res.out.data, "out1 out2", 9);
	cr_assert_eq(res.err.len, 3);
	cr_assert_eq(tb_k8s_chan_status(&ch, &code, msg, sizeof msg),
	             TB_K8S_ST_EXIT);
	cr_assert_eq(code, 0);
	tb_k8s_chan_free(&ch);
	res_free(&res);
}

Test(channels, nonzero_exit_code)
{
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	struct tb_k8s_chan ch;
	int code;
	char msg[200];

	tb_k8s_chan_init(&ch, &quiet_host, &res, 0, 0);
	feed(&ch, 3,
	     "{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\","
	     "\"message\":\"command terminated with non-zero exit code\","
	     "\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":"
	     "\"137\"}]}}");
	cr_assert_eq(tb_k8s_chan_status(&ch, &code, msg, sizeof msg),
	             TB_K8S_ST_EXIT);
	cr_assert_eq(code, 137);
	tb_k8s_chan_free(&ch);
	res_free(&res);
}

Test(channels, start_failure_has_no_exit_code)
{
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	struct tb_k8s_chan ch;
	int code;
	char msg[200];

	tb_k8s_chan_init(&ch, &quiet_host, &res, 0, 0);
	feed(&ch, 3,
	     "{\"status\":\"Failure\",\"reason\":\"InternalError\",\"message\":"
	     "\"OCI runtime exec failed: executable file not found in "
	     "$PATH\"}");
	cr_assert_eq(tb_k8s_chan_status(&ch, &code, msg, sizeof msg),
	             TB_K8S_ST_NOEXIT);
	cr_assert_eq(code, -1);
	cr_assert(strstr(msg, "InternalError") && strstr(msg, "not found"));
	tb_k8s_chan_free(&ch);
	res_free(&res);
}

Test(channels, no_status_and_bad_status)
{
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	struct tb_k8s_chan ch;
	int code;
	char msg[200];

	tb_k8s_chan_init(&ch, &quiet_host, &res, 0, 0);
	cr_assert_eq(tb_k8s_chan_status(&ch, &code, msg, sizeof msg),
	             TB_K8S_ST_NONE);
	feed(&ch, 3, "not json");
	cr_assert_eq(tb_k8s_chan_status(&ch, &code, msg, sizeof msg),
	             TB_K8S_ST_BAD);
	tb_k8s_chan_free(&ch);
	/* An exit code out of 0..255 is no exit code. */
	tb_k8s_chan_init(&ch, &quiet_host, &res, 0, 0);
	feed(&ch, 3,
	     "{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\","
	     "\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":"
	     "\"300\"}]}}");
	cr_assert_eq(tb_k8s_chan_status(&ch, &code, msg, sizeof msg),
	             TB_K8S_ST_NOEXIT);
	tb_k8s_chan_free(&ch);
	res_free(&res);
}

Test(channels, output_limit_truncates_each_stream)
{
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	struct tb_k8s_chan ch;

	tb_k8s_chan_init(&ch, &quiet_host, &res, 4, 0);
	feed(&ch, 1, "abc");
	feed(&ch, 1, "defg");
	feed(&ch, 2, "xy");
	cr_assert_eq(res.out.len, 4);
	cr_assert_arr_eq(res.out.data, "abcd", 4);
	cr_assert(res.out_truncated);
	cr_assert_eq(res.err.len, 2);
	cr_assert(!res.err_truncated);
	tb_k8s_chan_free(&ch);
	res_free(&res);
}

Test(channels, pid_marker_taken_off_stderr_even_when_split)
{
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	struct tb_k8s_chan ch;

	tb_k8s_chan_init(&ch, &quiet_host, &res, 0, 1);
	feed(&ch, 2, "taskbox-ex");
	feed(&ch, 2, "ec-pid 42");
	feed(&ch, 2, "17\nreal stderr\n");
	cr_assert_eq(tb_k8s_chan_finish(&ch), 0);
	cr_assert_eq(ch.pid, 4217);
	cr_assert_eq(res.err.len, 12);
	cr_assert_arr_eq(res.err.data, "real stderr\n", 12);
	tb_k8s_chan_free(&ch);
	res_free(&res);
}

Test(channels, stderr_that_is_no_marker_is_kept)
{
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	struct tb_k8s_chan ch;

	tb_k8s_chan_init(&ch, &quiet_host, &res, 0, 1);
	feed(&ch, 2, "taskbox-exec-pid x\n");
	cr_assert_eq(tb_k8s_chan_finish(&ch), 0);
	cr_assert_eq(ch.pid, 0);
	cr_assert_eq(res.err.len, 19);
	tb_k8s_chan_free(&ch);
	res_free(&res);
	memset(&res, 0, sizeof res);
	/* A marker cut short by the end of the stream is stderr too. */
	tb_k8s_chan_init(&ch, &quiet_host, &res, 0, 1);
	feed(&ch, 2, "taskbox");
	cr_assert_eq(tb_k8s_chan_finish(&ch), 0);
	cr_assert_eq(res.err.len, 7);
	tb_k8s_chan_free(&ch);
	res_free(&res);
}

Test(channels, close_and_stdin_channels_ignored)
{
	struct taskbox_exec_result res = {.struct_size = sizeof res};
	struct tb_k8s_chan ch;
	unsigned char close_msg[2] = {255, 0};

	tb_k8s_chan_init(&ch, &quiet_host, &res, 0, 0);
	cr_assert_eq(tb_k8s_chan_feed(&ch, close_msg, 2), 0);
	cr_assert_eq(tb_k8s_chan_feed(&ch, close_msg, 0), 0);
	feed(&ch, 0, "echo");
	feed(&ch, 4, "{\"Width\":80}");
	cr_assert_eq(res.out.len + res.err.len, 0);
	tb_k8s_chan_free(&ch);
}

Test(wsaccept, rfc6455_example)
{
	char out[32];

	/* RFC 6455 section 1.3. */
	tb_k8s_ws_accept("dGhlIHNhbXBsZSBub25jZQ==", out);
	cr_assert_str_eq(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

Test(ids, split)
{
	char name[64], uid[64];

	cr_assert_eq(tb_k8s_split_id("tb-0123abcd.6f1e2d3c-aaaa-bbbb-cccc-"
	                             "0123456789ab",
	                             name, sizeof name, uid, sizeof uid),
	             0);
	cr_assert_str_eq(name, "tb-0123abcd");
	cr_assert_str_eq(uid, "6f1e2d3c-aaaa-bbbb-cccc-0123456789ab");
	cr_assert_neq(tb_k8s_split_id("nodot", name, 64, uid, 64), 0);
	cr_assert_neq(tb_k8s_split_id("a.b.c", name, 64, uid, 64), 0);
	cr_assert_neq(tb_k8s_split_id("UP.abc", name, 64, uid, 64), 0);
	cr_assert_neq(tb_k8s_split_id("x.xyz", name, 64, uid, 64), 0);
	cr_assert_neq(tb_k8s_split_id(".abc", name, 64, uid, 64), 0);
}

Test(times, rfc3339_round_trip)
{
	char s[40];

	tb_k8s_rfc3339(1700000000, s, sizeof s);
	cr_assert_str_eq(s, "2023-11-14T22:13:20Z");
	cr_assert_eq(tb_k8s_parse_rfc3339(s), 1700000000);
	cr_assert_eq(tb_k8s_parse_rfc3339("2023-11-14T22:13:20.123456Z"),
	             1700000000);
	cr_assert_eq(tb_k8s_parse_rfc3339("2023-11-14T22:13:20+02:00"), -1);
	cr_assert_eq(tb_k8s_parse_rfc3339("yesterday"), -1);
}

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/tb-k8s-unit-XXXXXX");
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static const char kubeconfig[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: fake\n"
    "clusters:\n"
    "- name: c1\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:6443/\n"
    "    certificate-authority-data: aGVsbG8=\n"
    "    proxy-url: http://proxy:3128\n"
    "- name: c2\n"
    "  cluster:\n"
    "    server: http://10.0.0.1:8080\n"
    "    insecure-skip-tls-verify: true\n"
    "    certificate-authority: ca.crt\n"
    "contexts:\n"
    "- name: fake\n"
    "  context: {cluster: c1, user: u1, namespace: work}\n"
    "- name: other\n"
    "  context:\n"
    "    cluster: c2\n"
    "    user: u2\n"
    "- name: execd\n"
    "  context: {cluster: c1, user: u3}\n"
    "users:\n"
    "- name: u1\n"
    "  user:\n"
    "    token: \"abc.def\"\n"
    "- name: u2\n"
    "  user:\n"
    "    client-certificate: /etc/cert.pem\n"
    "    client-key-data: a2V5\n"
    "- name: u3\n"
    "  user:\n"
    "    exec:\n"
    "      command: aws\n";

Test(kubeconfig, current_context_with_inline_ca_and_token)
{
	char *path = write_temp(kubeconfig), err[512];
	struct tb_k8s_cluster cl;

	memset(&cl, 0, sizeof cl);
	pthread_mutex_init(&cl.token_lock, NULL);
	cr_assert_eq(tb_k8s_kubeconfig_load(path, NULL, &cl, err, sizeof err),
	             TASKBOX_OK, "%s", err);
	cr_assert_str_eq(cl.server, "https://127.0.0.1:6443");
	cr_assert_eq(cl.ca_len, 5);
	cr_assert_arr_eq(cl.ca_data, "hello", 5);
	cr_assert_str_eq(cl.token, "abc.def");
	cr_assert_str_eq(cl.proxy, "http://proxy:3128");
	cr_assert_str_eq(cl.namespace, "work");
	cr_assert(!cl.insecure);
	tb_k8s_cluster_free(&cl);
	unlink(path);
	free(path);
}

Test(kubeconfig, named_context_with_files_relative_to_it)
{
	char *path = write_temp(kubeconfig), err[512], want[600];
	struct tb_k8s_cluster cl;

	memset(&cl, 0, sizeof cl);
	cr_assert_eq(
	    tb_k8s_kubeconfig_load(path, "other", &cl, err, sizeof err),
	    TASKBOX_OK, "%s", err);
	cr_assert_str_eq(cl.server, "http://10.0.0.1:8080");
	cr_assert(cl.insecure);
	snprintf(want, sizeof want, "/tmp/ca.crt");
	cr_assert_str_eq(cl.ca_file, want);
	cr_assert_str_eq(cl.cert_file, "/etc/cert.pem");
	cr_assert_arr_eq(cl.key_data, "key", 3);
	cr_assert_null(cl.token);
	tb_k8s_cluster_free(&cl);
	unlink(path);
	free(path);
}

Test(kubeconfig, exec_plugin_and_bad_context_refused)
{
	char *path = write_temp(kubeconfig), err[512];
	struct tb_k8s_cluster cl;

	memset(&cl, 0, sizeof cl);
	cr_assert_eq(
	    tb_k8s_kubeconfig_load(path, "execd", &cl, err, sizeof err),
	    TASKBOX_E_UNSUPPORTED);
	cr_assert(strstr(err, "exec credential plugin"), "%s", err);
	tb_k8s_cluster_free(&cl);
	memset(&cl, 0, sizeof cl);
	cr_assert_eq(tb_k8s_kubeconfig_load(path, "nope", &cl, err, sizeof err),
	             TASKBOX_E_INVALID);
	cr_assert(strstr(err, "no context \"nope\""), "%s", err);
	tb_k8s_cluster_free(&cl);
	memset(&cl, 0, sizeof cl);
	cr_assert_eq(tb_k8s_kubeconfig_load("/nonexistent/kc", NULL, &cl, err,
	                                    sizeof err),
	             TASKBOX_E_INVALID);
	tb_k8s_cluster_free(&cl);
	unlink(path);
	free(path);
}

Test(objects, pod_readiness_and_failure_reasons)
{
	char why[300];
	json_t *running = json_loads(
	    "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":"
	    "\"Ready\",\"status\":\"True\"}]}}",
	    0, NULL);
	json_t *pending =
	    json_loads("{\"status\":{\"phase\":\"Pending\"}}", 0, NULL);
	json_t *pull = json_loads(
	    "{\"status\":{\"phase\":\"Pending\",\"containerStatuses\":[{"
	    "\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\","
	    "\"message\":\"no such image\"}}}]}}",
	    0, NULL);
	json_t *unsched = json_loads(
	    "{\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":"
	    "\"PodScheduled\",\"status\":\"False\",\"reason\":"
	    "\"Unschedulable\",\"message\":\"0/3 nodes\"}]}}",
	    0, NULL);
	json_t *evicted = json_loads(
	    "{\"status\":{\"phase\":\"Failed\",\"reason\":\"Evicted\"}}", 0,
	    NULL);

	cr_assert_eq(tb_k8s_pod_readiness(running, why, sizeof why), 1);
	cr_assert_eq(tb_k8s_pod_readiness(pending, why, sizeof why), 0);
	cr_assert_eq(tb_k8s_pod_readiness(pull, why, sizeof why),
	             -TASKBOX_E_NOT_FOUND);
	cr_assert(strstr(why, "ImagePullBackOff"));
	cr_assert_eq(tb_k8s_pod_readiness(unsched, why, sizeof why),
	             -TASKBOX_E_UNAVAILABLE);
	cr_assert(strstr(why, "0/3 nodes"));
	cr_assert_eq(tb_k8s_pod_readiness(evicted, why, sizeof why),
	             -TASKBOX_E_GONE);
	cr_assert(strstr(why, "Evicted"));
	json_decref(running);
	json_decref(pending);
	json_decref(pull);
	json_decref(unsched);
	json_decref(evicted);
}

Test(objects, pod_and_sandbox_bodies)
{
	struct tb_k8s inst;
	struct tb_k8s_template t;
	json_t *o;
	char path[256];

	memset(&inst, 0, sizeof inst);
	memset(&t, 0, sizeof t);
	inst.namespace = "ns1";
	inst.max_lifetime_s = 7200;
	t.name = "default";
	t.image = "busybox";
	t.runtime_class = "gvisor";
	o = tb_k8s_object_new(&inst, &t, "tb-1", "1", 1700000000, NULL);
	cr_assert_not_null(o);
	cr_assert_str_eq(json_string_value(json_object_get(o, "kind")), "Pod");
	cr_assert_eq(json_integer_value(json_object_get(
	                 json_object_get(o, "spec"), "activeDeadlineSeconds")),
	             7200);
	cr_assert(json_is_false(json_object_get(
	    json_object_get(o, "spec"), "automountServiceAccountToken")));
	cr_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(json_object_get(o, "metadata"), "annotations"),
	        TB_K8S_EXPIRES_AT)),
	    "2023-11-14T22:13:20Z");
	json_decref(o);
	inst.kind = TB_K8S_SANDBOX;
	o = tb_k8s_object_new(&inst, &t, "tb-1", "1", 1700000000, NULL);
	cr_assert_str_eq(json_string_value(json_object_get(o, "kind")),
	                 "Sandbox");
	cr_assert_str_eq(json_string_value(json_object_get(
	                     json_object_get(o, "spec"), "shutdownTime")),
	                 "2023-11-14T22:13:20Z");
	json_decref(o);
	tb_k8s_object_path(&inst, TB_K8S_SANDBOX, "x", path, sizeof path);
	cr_assert_str_eq(path, "/apis/agents.x-k8s.io/v1beta1/namespaces/ns1/"
	                       "sandboxes/x");
	tb_k8s_object_path(&inst, TB_K8S_POD, NULL, path, sizeof path);
	cr_assert_str_eq(path, "/api/v1/namespaces/ns1/pods");
}

Test(errors, status_message_and_codes)
{
	char msg[100];
	const char body[] = "{\"kind\":\"Status\",\"message\":\"pods \\\"x\\\" "
	                    "is forbidden\"}";

	tb_k8s_status_message(body, strlen(body), msg, sizeof msg);
	cr_assert_str_eq(msg, "pods \"x\" is forbidden");
	tb_k8s_status_message("plain text\nmore", 15, msg, sizeof msg);
	cr_assert_str_eq(msg, "plain text");
	cr_assert_eq(tb_k8s_http_code(403), TASKBOX_E_PERMISSION);
	cr_assert_eq(tb_k8s_http_code(429), TASKBOX_E_RATE_LIMITED);
	cr_assert_eq(tb_k8s_http_code(503), TASKBOX_E_UNAVAILABLE);
}

Test(objects, owner_label_annotation_and_rules)
{
	struct tb_k8s inst;
	struct tb_k8s_template t;
	char hash[17], owner[TASKBOX_OWNER_MAX], big[300];
	time_t created, expires;
	json_t *o, *meta;

	tb_k8s_owner_hash("a", hash);
	cr_assert_str_eq(hash, "af63dc4c8601ec8c"); /* FNV-1a 64's vector */
	tb_k8s_owner_hash("alice@example.com", hash);
	cr_assert_str_eq(hash, "67023fc4a7ff2a46");
	cr_assert(tb_k8s_owner_valid("bob smith"));
	cr_assert(tb_k8s_owner_valid("\xc3\xa9ric/x:y@z"));
	cr_assert_not(tb_k8s_owner_valid(""));
	cr_assert_not(tb_k8s_owner_valid("a\nb"));
	cr_assert_not(tb_k8s_owner_valid("a\x7f"));
	cr_assert_not(tb_k8s_owner_valid("a\xc2\x85")); /* C1 NEL */
	cr_assert_not(tb_k8s_owner_valid("\xff\xfe"));  /* not UTF-8 */
	memset(big, 'x', 255);
	big[255] = '\0';
	cr_assert(tb_k8s_owner_valid(big));
	big[255] = 'x';
	big[256] = '\0';
	cr_assert_not(tb_k8s_owner_valid(big));

	memset(&inst, 0, sizeof inst);
	memset(&t, 0, sizeof t);
	inst.namespace = "ns1";
	inst.max_lifetime_s = 7200;
	inst.kind = TB_K8S_SANDBOX;
	t.name = "default";
	t.image = "busybox";
	o = tb_k8s_object_new(&inst, &t, "tb-1", "1", 1700000000,
	                      "alice@example.com");
	meta = json_object_get(o, "metadata");
	cr_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(meta, "labels"),
	                                      TB_K8S_OWNER_LABEL)),
	    "67023fc4a7ff2a46");
	/* Only on the Sandbox, not on its pod. */
	cr_assert_null(json_object_get(
	    json_object_get(
	        json_object_get(
	            json_object_get(json_object_get(o, "spec"), "podTemplate"),
	            "metadata"),
	        "labels"),
	    TB_K8S_OWNER_LABEL));
	json_object_set_new(meta, "creationTimestamp",
	                    json_string("2023-11-14T22:00:00Z"));
	cr_assert_eq(
	    tb_k8s_object_meta(o, owner, sizeof owner, &created, &expires), 0);
	cr_assert_str_eq(owner, "alice@example.com");
	cr_assert_eq(created, 1700000000 - 800);
	cr_assert_eq(expires, 1700000000);
	json_object_set_new(json_object_get(meta, "annotations"),
	                    TB_K8S_OWNER_ANN, json_string("a\tb"));
	cr_assert_eq(
	    tb_k8s_object_meta(o, owner, sizeof owner, &created, &expires), -1);
	json_decref(o);
	o = tb_k8s_object_new(&inst, &t, "tb-1", "1", 1700000000, "");
	meta = json_object_get(o, "metadata");
	cr_assert_null(json_object_get(json_object_get(meta, "labels"),
	                               TB_K8S_OWNER_LABEL));
	cr_assert_eq(
	    tb_k8s_object_meta(o, owner, sizeof owner, &created, &expires), 0);
	cr_assert_str_eq(owner, "");
	cr_assert_eq(created, 0);
	json_decref(o);
}
