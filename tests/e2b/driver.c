/* A tiny host for testing a provider plugin by hand or from a script: it
 * loads the module named by argv[1] and runs one op per JSON line on stdin,
 * printing one JSON line per op on stdout:
 *   {"op":"init","settings":{...}}        {"op":"create","template":..,
 *   {"op":"connect","id":ID}                "lifetime":N}
 *   {"op":"exec","argv":[..],"env":[..],"cwd":..,"timeout_ms":N,
 *    "output_limit":N,"cancel_after_ms":N,"until_newline":true}
 *   {"op":"read_file","path":..,"offset":N,"length":N}
 *   {"op":"read_files","items":[{"path":..,"offset":N,"length":N},..]}
 *     (answers "items":[{"status":N,"data":BASE64,"file_size":N},..]; rc
 *     11, unsupported, when the plugin has no read_files)
 *   {"op":"write_file","path":..,"data":BASE64,"mode":N}
 *   {"op":"renew","lifetime":N}  {"op":"close"}  {"op":"destroy","id":ID}
 *   {"op":"fini"}
 * Since ABI 1.5: create takes "owner" (and "old_host": true to pass a
 * create_req that ends before it), and
 *   {"op":"describe"}  (answers "info":{id, owner, created_s, expires_s})
 *   {"op":"list","owner":..,"stop_after":N}  (answers "items":[info,..])
 * Answers carry "rc" and "err" and the op's results (bytes as base64).
 * The plugin's log lines go to stderr. */
#include "config.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "taskbox/provider.h"

static const struct taskbox_provider *prov;
static void *instance;
static void *conn;

static void host_log(enum taskbox_log_level level, const char *provider,
                     const char *message)
{
	fprintf(stderr, "log %d %s: %s\n", (int)level, provider, message);
}

static const struct taskbox_host host = {
    TASKBOX_ABI_MAJOR,
    TASKBOX_ABI_MINOR,
    sizeof(struct taskbox_host),
    malloc,
    realloc,
    free,
    host_log,
};

static char *b64(const unsigned char *p, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc(n / 3 * 4 + 5), *o = out;
	size_t i;

	for (i = 0; out && i + 2 < n; i += 3) {
		unsigned v =
		    (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = tab[v >> 6 & 63];
		*o++ = tab[v & 63];
	}
	if (out && i < n) {
		unsigned v = (unsigned)p[i] << 16 |
		             (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	if (out)
		*o = '\0';
	return out;
}

static unsigned char *unb64(const char *s, size_t *n)
{
	unsigned char *out = malloc(strlen(s) / 4 * 3 + 3);
	unsigned acc = 0;
	int bits = 0;

	*n = 0;
	for (; out && *s && *s != '='; s++) {
		const char *tab =
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
		    "wxyz0123456789+/";
		const char *at = strchr(tab, *s);
		if (!at)
			continue;
		acc = (acc << 6 | (unsigned)(at - tab)) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[(*n)++] = (unsigned char)(acc >> bits);
		}
	}
	return out;
}

static void set_bytes(json_t *o, const char *key, struct taskbox_buf *b)
{
	char *t = b64(b->data, b->len);
	json_object_set_new(o, key, json_string(t ? t : ""));
	free(t);
	free(b->data);
}

static struct timespec cancel_at;
static int cancel_armed;

static int cancelled(void *arg)
{
	struct timespec now;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return cancel_armed && (now.tv_sec > cancel_at.tv_sec ||
	                        (now.tv_sec == cancel_at.tv_sec &&
	                         now.tv_nsec >= cancel_at.tv_nsec));
}

static const char **strings(json_t *arr)
{
	size_t i, n = json_array_size(arr);
	const char **v = calloc(n + 1, sizeof *v);

	for (i = 0; v && i < n; i++)
		v[i] = json_string_value(json_array_get(arr, i));
	return v;
}

static int do_exec(json_t *cmd, json_t *out, char *err)
{
	struct taskbox_exec_req req = {0};
	struct taskbox_exec_result res = {0};
	const char **argv = strings(json_object_get(cmd, "argv"));
	const char **env = json_object_get(cmd, "env")
	                       ? strings(json_object_get(cmd, "env"))
	                       : NULL;
	json_int_t cancel_ms =
	    json_integer_value(json_object_get(cmd, "cancel_after_ms"));
	int rc;

	req.struct_size = sizeof req;
	req.argv = argv;
	req.env = env;
	req.cwd = json_string_value(json_object_get(cmd, "cwd"));
	req.timeout_ms =
	    (uint32_t)json_integer_value(json_object_get(cmd, "timeout_ms"));
	req.output_limit =
	    (size_t)json_integer_value(json_object_get(cmd, "output_limit"));
	req.cancelled = cancelled;
	req.until_newline = json_is_true(json_object_get(cmd, "until_newline"));
	cancel_armed = cancel_ms > 0;
	clock_gettime(CLOCK_MONOTONIC, &cancel_at);
	cancel_at.tv_sec += cancel_ms / 1000;
	cancel_at.tv_nsec += (cancel_ms % 1000) * 1000000L;
	if (cancel_at.tv_nsec >= 1000000000L) {
		cancel_at.tv_sec++;
		cancel_at.tv_nsec -= 1000000000L;
	}
	res.struct_size = sizeof res;
	rc = prov->ops.exec(conn, &req, &res, err, TASKBOX_ERRBUF_SIZE);
	json_object_set_new(out, "exit_code", json_integer(res.exit_code));
	json_object_set_new(out, "timed_out", json_boolean(res.timed_out));
	json_object_set_new(out, "out_truncated",
	                    json_boolean(res.out_truncated));
	json_object_set_new(out, "err_truncated",
	                    json_boolean(res.err_truncated));
	set_bytes(out, "stdout", &res.out);
	set_bytes(out, "stderr", &res.err);
	free(argv);
	free(env);
	return rc;
}

static int do_read_files(json_t *cmd, json_t *out, char *err)
{
	json_t *arr = json_object_get(cmd, "items"), *res = json_array();
	size_t i, n = json_array_size(arr);
	struct taskbox_read_item *items = calloc(n ? n : 1, sizeof *items);
	struct taskbox_read_item **ptrs = calloc(n ? n : 1, sizeof *ptrs);
	int rc = TASKBOX_E_NOMEM;

	if (prov->struct_size < offsetof(struct taskbox_provider, read_files) +
	                            sizeof prov->read_files ||
	    !prov->read_files) {
		rc = TASKBOX_E_UNSUPPORTED;
		snprintf(err, TASKBOX_ERRBUF_SIZE, "no read_files");
		goto out;
	}
	if (!items || !ptrs || !res)
		goto out;
	for (i = 0; i < n; i++) {
		json_t *it = json_array_get(arr, i);
		items[i].struct_size = sizeof items[i];
		items[i].path = json_string_value(json_object_get(it, "path"));
		items[i].offset =
		    (uint64_t)json_integer_value(json_object_get(it, "offset"));
		items[i].length =
		    (size_t)json_integer_value(json_object_get(it, "length"));
		ptrs[i] = &items[i];
	}
	rc = prov->read_files(conn, ptrs, n, err, TASKBOX_ERRBUF_SIZE);
	for (i = 0; i < n; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "status", json_integer(items[i].status));
		json_object_set_new(
		    o, "file_size",
		    items[i].file_size == UINT64_MAX
		        ? json_integer(-1)
		        : json_integer((json_int_t)items[i].file_size));
		set_bytes(o, "data", &items[i].data);
		json_array_append_new(res, o);
	}
	json_object_set(out, "items", res);
out:
	json_decref(res);
	free(items);
	free(ptrs);
	return rc;
}

static json_t *info_json(const struct taskbox_sandbox_info *info)
{
	return json_pack("{ss ss sI sI}", "id", info->id, "owner", info->owner,
	                 "created_s", (json_int_t)info->created_s, "expires_s",
	                 (json_int_t)info->expires_s);
}

static int has_op(size_t end)
{
	return prov->struct_size >= end;
}

static int do_describe(json_t *out, char *err)
{
	struct taskbox_sandbox_info info;
	int rc;

	if (!has_op(offsetof(struct taskbox_provider, describe) +
	            sizeof prov->describe) ||
	    !prov->describe) {
		snprintf(err, TASKBOX_ERRBUF_SIZE, "no describe");
		return TASKBOX_E_UNSUPPORTED;
	}
	memset(&info, 0, sizeof info);
	info.struct_size = sizeof info;
	rc = prov->describe(conn, &info, err, TASKBOX_ERRBUF_SIZE);
	if (rc == TASKBOX_OK)
		json_object_set_new(out, "info", info_json(&info));
	return rc;
}

struct list_state {
	json_t *items;
	json_int_t stop_after; /* 0: never */
};

static int list_one(void *arg, const struct taskbox_sandbox_info *info)
{
	struct list_state *st = arg;

	json_array_append_new(st->items, info_json(info));
	return st->stop_after > 0 &&
	       (json_int_t)json_array_size(st->items) >= st->stop_after;
}

static int do_list(json_t *cmd, json_t *out, char *err)
{
	struct list_state st;
	int rc;

	if (!has_op(offsetof(struct taskbox_provider, list) +
	            sizeof prov->list) ||
	    !prov->list) {
		snprintf(err, TASKBOX_ERRBUF_SIZE, "no list");
		return TASKBOX_E_UNSUPPORTED;
	}
	st.items = json_array();
	st.stop_after = json_integer_value(json_object_get(cmd, "stop_after"));
	rc = prov->list(instance,
	                json_string_value(json_object_get(cmd, "owner")),
	                list_one, &st, err, TASKBOX_ERRBUF_SIZE);
	json_object_set_new(out, "items", st.items);
	return rc;
}

static int run(json_t *cmd, json_t *out, char *err)
{
	const char *op = json_string_value(json_object_get(cmd, "op"));

	if (!op)
		return -1;
	if (strcmp(op, "init") == 0) {
		char *s = json_dumps(json_object_get(cmd, "settings"), 0);
		int rc = prov->ops.init(&host, s ? s : "{}", &instance, err,
		                        TASKBOX_ERRBUF_SIZE);
		free(s);
		return rc;
	}
	if (strcmp(op, "create") == 0) {
		struct taskbox_create_req req = {sizeof req, NULL, 0, NULL};
		char id[TASKBOX_SANDBOX_ID_MAX] = "";
		int rc;
		req.template_name =
		    json_string_value(json_object_get(cmd, "template"));
		req.lifetime_s = (uint32_t)json_integer_value(
		    json_object_get(cmd, "lifetime"));
		req.owner = json_string_value(json_object_get(cmd, "owner"));
		if (json_is_true(json_object_get(cmd, "old_host")))
			req.struct_size =
			    offsetof(struct taskbox_create_req, owner);
		rc = prov->ops.create(instance, &req, id, err,
		                      TASKBOX_ERRBUF_SIZE);
		json_object_set_new(out, "id", json_string(id));
		return rc;
	}
	if (strcmp(op, "describe") == 0)
		return do_describe(out, err);
	if (strcmp(op, "list") == 0)
		return do_list(cmd, out, err);
	if (strcmp(op, "connect") == 0)
		return prov->ops.connect(
		    instance, json_string_value(json_object_get(cmd, "id")),
		    &conn, err, TASKBOX_ERRBUF_SIZE);
	if (strcmp(op, "close") == 0) {
		prov->ops.close(conn);
		conn = NULL;
		return 0;
	}
	if (strcmp(op, "exec") == 0)
		return do_exec(cmd, out, err);
	if (strcmp(op, "read_file") == 0) {
		struct taskbox_buf data = {NULL, 0};
		uint64_t size = 0;
		int rc = prov->ops.read_file(
		    conn, json_string_value(json_object_get(cmd, "path")),
		    (uint64_t)json_integer_value(
		        json_object_get(cmd, "offset")),
		    (size_t)json_integer_value(json_object_get(cmd, "length")),
		    &data, &size, err, TASKBOX_ERRBUF_SIZE);
		set_bytes(out, "data", &data);
		json_object_set_new(out, "file_size",
		                    size == UINT64_MAX
		                        ? json_integer(-1)
		                        : json_integer((json_int_t)size));
		return rc;
	}
	if (strcmp(op, "read_files") == 0)
		return do_read_files(cmd, out, err);
	if (strcmp(op, "write_file") == 0) {
		size_t n;
		unsigned char *data =
		    unb64(json_string_value(json_object_get(cmd, "data")), &n);
		int rc = prov->ops.write_file(
		    conn, json_string_value(json_object_get(cmd, "path")), data,
		    n,
		    (uint32_t)json_integer_value(json_object_get(cmd, "mode")),
		    err, TASKBOX_ERRBUF_SIZE);
		free(data);
		return rc;
	}
	if (strcmp(op, "renew") == 0)
		return prov->ops.renew(conn,
		                       (uint32_t)json_integer_value(
		                           json_object_get(cmd, "lifetime")),
		                       err, TASKBOX_ERRBUF_SIZE);
	if (strcmp(op, "destroy") == 0)
		return prov->ops.destroy(
		    instance, json_string_value(json_object_get(cmd, "id")),
		    err, TASKBOX_ERRBUF_SIZE);
	if (strcmp(op, "fini") == 0) {
		prov->ops.fini(instance);
		instance = NULL;
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	taskbox_provider_entry_fn entry;
	char *line = NULL;
	size_t cap = 0;
	void *dl;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN.so < ops.jsonl\n", argv[0]);
		return 2;
	}
	dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	*(void **)&entry = dlsym(dl, TASKBOX_PROVIDER_ENTRY_NAME);
	if (!entry || !(prov = entry())) {
		fprintf(stderr, "no entry symbol in %s\n", argv[1]);
		return 2;
	}
	while (getline(&line, &cap, stdin) > 0) {
		char err[TASKBOX_ERRBUF_SIZE] = "";
		json_t *cmd = json_loads(line, 0, NULL), *out = json_object();
		int rc = cmd ? run(cmd, out, err) : -1;
		char *text;

		json_object_set_new(out, "rc", json_integer(rc));
		json_object_set_new(out, "err", json_string(err));
		text = json_dumps(out, JSON_COMPACT);
		printf("%s\n", text ? text : "{\"rc\":-2}");
		fflush(stdout);
		free(text);
		json_decref(out);
		json_decref(cmd);
	}
	free(line);
	if (conn)
		prov->ops.close(conn);
	if (instance)
		prov->ops.fini(instance);
	dlclose(dl);
	return 0;
}
