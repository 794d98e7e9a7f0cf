/* A small host for the ownership ops of a provider plugin (ABI 1.5): it
 * loads the module named by argv[1] and runs one op per JSON line on stdin,
 * printing one JSON line per op on stdout:
 *   {"op":"init","settings":{...}}   {"op":"fini"}
 *   {"op":"create","owner":..,"lifetime":N,"struct_size":"old"}
 *     ("old": the request as a host before 1.5 sends it, without owner)
 *   {"op":"connect","id":ID}  {"op":"close"}  {"op":"destroy","id":ID}
 *   {"op":"renew","lifetime":N}
 *   {"op":"describe"}  answers "info":{id, owner, created_s, expires_s}
 *   {"op":"list","owner":..,"stop_after":N}  answers "items":[info..]
 *     (owner absent or null: every sandbox; stop_after: each returns 1
 *     after N calls)
 * Answers carry "rc" and "err". The plugin's log lines go to stderr. */
#include "config.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static json_t *info_json(const struct taskbox_sandbox_info *info)
{
	return json_pack("{ss ss sI sI}", "id", info->id, "owner", info->owner,
	                 "created_s", (json_int_t)info->created_s, "expires_s",
	                 (json_int_t)info->expires_s);
}

struct listing {
	json_t *items;
	long stop_after; /* 0: never */
};

static int each(void *arg, const struct taskbox_sandbox_info *info)
{
	struct listing *l = arg;

	json_array_append_new(l->items, info_json(info));
	return l->stop_after > 0 &&
	       (long)json_array_size(l->items) >= l->stop_after;
}

static int create(json_t *cmd, json_t *out, char *err)
{
	struct taskbox_create_req req;
	char id[TASKBOX_SANDBOX_ID_MAX] = "";
	json_t *ss = json_object_get(cmd, "struct_size");
	int rc;

	memset(&req, 0, sizeof req);
	req.struct_size = sizeof req;
	if (json_is_string(ss) && strcmp(json_string_value(ss), "old") == 0)
		req.struct_size = offsetof(struct taskbox_create_req, owner);
	req.lifetime_s =
	    (uint32_t)json_integer_value(json_object_get(cmd, "lifetime"));
	req.owner = json_string_value(json_object_get(cmd, "owner"));
	rc = prov->ops.create(instance, &req, id, err, TASKBOX_ERRBUF_SIZE);
	json_object_set_new(out, "id", json_string(id));
	return rc;
}

static int run(json_t *cmd, json_t *out, char *err)
{
	const char *op = json_string_value(json_object_get(cmd, "op"));
	const char *id = json_string_value(json_object_get(cmd, "id"));

	if (!op)
		return -1;
	if (strcmp(op, "init") == 0) {
		char *s = json_dumps(json_object_get(cmd, "settings"), 0);
		int rc = prov->ops.init(&host, s ? s : "{}", &instance, err,
		                        TASKBOX_ERRBUF_SIZE);
		free(s);
		return rc;
	}
	if (strcmp(op, "create") == 0)
		return create(cmd, out, err);
	if (strcmp(op, "connect") == 0)
		return prov->ops.connect(instance, id, &conn, err,
		                         TASKBOX_ERRBUF_SIZE);
	if (strcmp(op, "close") == 0) {
		if (conn)
			prov->ops.close(conn);
		conn = NULL;
		return 0;
	}
	if (strcmp(op, "renew") == 0)
		return prov->ops.renew(conn,
		                       (uint32_t)json_integer_value(
		                           json_object_get(cmd, "lifetime")),
		                       err, TASKBOX_ERRBUF_SIZE);
	if (strcmp(op, "describe") == 0) {
		struct taskbox_sandbox_info info;
		int rc;
		if (!prov->describe)
			return TASKBOX_E_UNSUPPORTED;
		memset(&info, 0, sizeof info);
		info.struct_size = sizeof info;
		rc = prov->describe(conn, &info, err, TASKBOX_ERRBUF_SIZE);
		json_object_set_new(out, "info", info_json(&info));
		return rc;
	}
	if (strcmp(op, "list") == 0) {
		struct listing l = {json_array(), 0};
		int rc;
		if (!prov->list) {
			json_decref(l.items);
			return TASKBOX_E_UNSUPPORTED;
		}
		l.stop_after = (long)json_integer_value(
		    json_object_get(cmd, "stop_after"));
		rc = prov->list(
		    instance, json_string_value(json_object_get(cmd, "owner")),
		    each, &l, err, TASKBOX_ERRBUF_SIZE);
		json_object_set_new(out, "items", l.items);
		return rc;
	}
	if (strcmp(op, "destroy") == 0)
		return prov->ops.destroy(instance, id, err,
		                         TASKBOX_ERRBUF_SIZE);
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
	if (prov->struct_size <
	        offsetof(struct taskbox_provider, list) + sizeof prov->list ||
	    prov->abi_minor < 5) {
		fprintf(stderr, "%s is built for ABI 1.%u: no describe/list\n",
		        argv[1], (unsigned)prov->abi_minor);
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
