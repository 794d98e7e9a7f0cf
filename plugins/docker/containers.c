/* docker provider: sandboxes as containers: create, connect, destroy, and
 * lifetimes. A sandbox is a container labelled as taskbox's (and with its
 * owner, owner.c), running an idle command under the engine's init where
 * it has one (init.c). Its deadline, home and user ids live in a
 * root-owned state file inside it (lifetime.c). */
#include "config.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker.h"

int tb_dk_valid_id(const char *id)
{
	size_t n = 0;

	for (; id && id[n]; n++)
		if (!isxdigit((unsigned char)id[n]) ||
		    isupper((unsigned char)id[n]))
			return 0;
	return n == 64;
}

static int bad_id(char *errbuf, size_t errlen)
{
	return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
	                  "docker sandbox ids are 64 lowercase hex digits");
}

/* GET /containers/ID/json into *out (a jansson object the caller frees). */
static int inspect(struct tb_dk *dk, const char *id, json_t **out, char *errbuf,
                   size_t errlen)
{
	struct tb_dk_resp r;
	char path[128];
	int code;

	snprintf(path, sizeof(path), "/containers/%s/json", id);
	code =
	    tb_dk_request(dk, "GET", path, NULL, NULL, 0, &r, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	if (r.status != 200) {
		code = tb_dk_http_error(&r, "no such sandbox", errbuf, errlen);
		tb_dk_resp_free(&r);
		return code;
	}
	*out = json_loadb(r.body, r.len, 0, NULL);
	tb_dk_resp_free(&r);
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return tb_dk_fail(TASKBOX_E_PROTOCOL, errbuf, errlen,
		                  "the engine's container inspect is not JSON");
	}
	return TASKBOX_OK;
}

enum tb_dk_state tb_dk_container_state(struct tb_dk *dk, const char *id)
{
	char err[TASKBOX_ERRBUF_SIZE];
	enum tb_dk_state st;
	json_t *info = NULL, *state;
	int code = inspect(dk, id, &info, err, sizeof(err));

	if (code == TASKBOX_E_NOT_FOUND)
		return TB_DK_MISSING;
	if (code != TASKBOX_OK)
		return TB_DK_UNKNOWN;
	state = json_object_get(info, "State");
	st = json_is_true(json_object_get(state, "Running")) &&
	             !json_is_true(json_object_get(state, "Paused"))
	         ? TB_DK_RUNNING
	         : TB_DK_STOPPED;
	json_decref(info);
	return st;
}

/* A simple POST/DELETE whose success is any 2xx (or 304). */
static int simple(struct tb_dk *dk, const char *method, const char *path,
                  const char *what, char *errbuf, size_t errlen)
{
	struct tb_dk_resp r;
	int code;

	code =
	    tb_dk_request(dk, method, path, NULL, NULL, 0, &r, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	if ((r.status < 200 || r.status > 299) && r.status != 304)
		code = tb_dk_http_error(&r, what, errbuf, errlen);
	tb_dk_resp_free(&r);
	return code;
}

int tb_dk_remove(struct tb_dk *dk, const char *id, char *errbuf, size_t errlen)
{
	char path[128];

	tb_dk_cache_drop(dk, id);
	snprintf(path, sizeof(path), "/containers/%s?force=true&v=true", id);
	return simple(dk, "DELETE", path, "cannot remove the sandbox", errbuf,
	              errlen);
}

/* Finds the user's passwd entry (by name or uid) in text and sets uid,
 * gid and home; leaves them unchanged when there is none. */
static void passwd_lookup(const char *text, const char *user, long *uid,
                          long *gid, char **home)
{
	const char *line = text;
	char name[256], f[7][512];

	snprintf(name, sizeof(name), "%s", user);
	name[strcspn(name, ":")] = '\0';
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		int nf = 0;
		const char *p = line;
		memset(f, 0, sizeof(f));
		while (nf < 7 && p <= line + n) {
			size_t k = strcspn(p, ":\n");
			if (p + k > line + n)
				k = (size_t)(line + n - p);
			snprintf(f[nf++], sizeof(f[0]), "%.*s", (int)k, p);
			p += k + 1;
		}
		if (nf >= 6 && (!strcmp(f[0], name) || !strcmp(f[2], name))) {
			*uid = strtol(f[2], NULL, 10);
			*gid = strtol(f[3], NULL, 10);
			free(*home);
			*home = strdup(f[5]);
			return;
		}
		line = end ? end + 1 : NULL;
	}
}

/* Works out the sandbox's home and user ids for a created container. */
static int resolve_user(struct tb_dk *dk, const char *id, json_t *cfg,
                        char **home, long *uid, long *gid, char *errbuf,
                        size_t errlen)
{
	const char *wd = json_string_value(json_object_get(cfg, "WorkingDir"));
	const char *user = json_string_value(json_object_get(cfg, "User"));
	const char *colon;
	char *passwd = NULL;
	size_t len;
	int code;

	*uid = 0;
	*gid = 0;
	*home = NULL;
	if (!user || !*user)
		user = "root";
	if (isdigit((unsigned char)user[0]))
		*uid = *gid = strtol(user, NULL, 10);
	code = tb_dk_read_small(dk, id, "/etc/passwd", 1 << 20, &passwd, &len,
	                        errbuf, errlen);
	if (code == TASKBOX_OK)
		passwd_lookup(passwd, user, uid, gid, home);
	else if (code != TASKBOX_E_NOT_FOUND)
		return code;
	free(passwd);
	colon = strchr(user, ':');
	if (colon && isdigit((unsigned char)colon[1]))
		*gid = strtol(colon + 1, NULL, 10);
	/* An image's WorkingDir of "/" (podman reports it for none) does not
	 * make a home; the user's passwd entry does. */
	if (dk->workdir || (wd && *wd && strcmp(wd, "/"))) {
		free(*home);
		*home = strdup(dk->workdir ? dk->workdir : wd);
	} else if (!*home || (*home)[0] != '/') {
		free(*home);
		*home = strdup("/");
	}
	return *home ? TASKBOX_OK
	             : tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
}

/* What one create makes: the image, lifetime, deadline and owner (NULL
 * for none), and whether to ask for the engine's init. */
struct make_req {
	const char *image;
	uint32_t lifetime;
	int64_t deadline;
	const char *owner;
	int init;
};

static json_t *create_body(struct tb_dk *dk, const struct make_req *m)
{
	char lt[32], dl[32];
	json_t *hc, *labels, *body;

	snprintf(lt, sizeof(lt), "%u", m->lifetime);
	snprintf(dl, sizeof(dl), "%lld", (long long)m->deadline);
	labels = json_pack("{ss ss ss}", TB_DK_LABEL_OWNER, "1",
	                   TB_DK_LABEL_LIFETIME, lt, TB_DK_LABEL_DEADLINE, dl);
	/* The owner is a label: set once here, read-only for the engine's
	 * clients afterwards and invisible inside the container. */
	if (labels && m->owner &&
	    json_object_set_new(labels, TB_DK_LABEL_PRINCIPAL,
	                        json_string(m->owner))) {
		json_decref(labels);
		labels = NULL;
	}
	hc = json_pack("{sb ss}", "Init", m->init, "NetworkMode", dk->network);
	if (hc && dk->memory)
		json_object_set_new(hc, "Memory", json_integer(dk->memory));
	if (hc && dk->nano_cpus)
		json_object_set_new(hc, "NanoCpus",
		                    json_integer(dk->nano_cpus));
	if (hc && dk->pids_limit)
		json_object_set_new(hc, "PidsLimit",
		                    json_integer(dk->pids_limit));
	body = json_pack("{ss s[s] s[s] so so sb sb sb}", "Image", m->image,
	                 "Entrypoint", "sleep", "Cmd", "infinity", "Labels",
	                 labels, "HostConfig", hc, "Tty", 0, "OpenStdin", 0,
	                 "AttachStdin", 0);
	if (body && dk->user)
		json_object_set_new(body, "User", json_string(dk->user));
	if (body && dk->env)
		json_object_set(body, "Env", dk->env);
	if (body && dk->workdir)
		json_object_set_new(body, "WorkingDir",
		                    json_string(dk->workdir));
	return body;
}

/* Picks the image for a template (NULL: the instance's image). */
static int pick_image(struct tb_dk *dk, const char *tmpl, const char **image,
                      char *errbuf, size_t errlen)
{
	json_t *v;

	if (!tmpl || !*tmpl) {
		*image = dk->image;
		return TASKBOX_OK;
	}
	v = dk->templates ? json_object_get(dk->templates, tmpl) : NULL;
	if (!v)
		return tb_dk_fail(TASKBOX_E_NOT_FOUND, errbuf, errlen,
		                  "no template \"%.100s\" in the docker "
		                  "settings' templates",
		                  tmpl);
	*image = json_string_value(v);
	return TASKBOX_OK;
}

/* Creates, starts and records one container as m says; cid gets its id.
 * A container left half made is removed. */
static int make_sandbox(struct tb_dk *dk, const struct make_req *m, char *cid,
                        char *errbuf, size_t errlen)
{
	struct tb_dk_resp r;
	json_t *body, *ans = NULL, *info = NULL;
	char *text, *home = NULL, path[128], what[300];
	long uid = 0, gid = 0;
	int code;

	body = create_body(dk, m);
	text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	code =
	    tb_dk_request(dk, "POST", "/containers/create", "application/json",
	                  text, strlen(text), &r, errbuf, errlen);
	free(text);
	if (code != TASKBOX_OK)
		return code;
	if (r.status != 201) {
		snprintf(what, sizeof(what), "cannot create a sandbox from %s",
		         m->image);
		code = tb_dk_http_error(&r, what, errbuf, errlen);
		tb_dk_resp_free(&r);
		return code;
	}
	ans = json_loadb(r.body, r.len, 0, NULL);
	tb_dk_resp_free(&r);
	snprintf(cid, 65, "%s",
	         json_string_value(json_object_get(ans, "Id"))
	             ? json_string_value(json_object_get(ans, "Id"))
	             : "");
	json_decref(ans);
	if (!tb_dk_valid_id(cid))
		return tb_dk_fail(TASKBOX_E_PROTOCOL, errbuf, errlen,
		                  "the engine's create gave no 64-hex Id");
	code = inspect(dk, cid, &info, errbuf, errlen);
	if (code == TASKBOX_OK)
		code = resolve_user(dk, cid, json_object_get(info, "Config"),
		                    &home, &uid, &gid, errbuf, errlen);
	json_decref(info);
	if (code != TASKBOX_OK)
		goto fail;
	snprintf(path, sizeof(path), "/containers/%s/start", cid);
	code = simple(dk, "POST", path, "cannot start the sandbox", errbuf,
	              errlen);
	if (code == TASKBOX_OK)
		code = tb_dk_write_state(dk, cid, m->deadline, home, uid, gid,
		                         errbuf, errlen);
	if (code != TASKBOX_OK)
		goto fail;
	free(home);
	return TASKBOX_OK;
fail:
	free(home);
	tb_dk_remove(dk, cid, what, sizeof(what));
	return code;
}

/* req->owner when the host's request has it and it is not empty. */
static const char *req_owner(const struct taskbox_create_req *req)
{
	if (req->struct_size <
	    offsetof(struct taskbox_create_req, owner) + sizeof(req->owner))
		return NULL;
	return req->owner && *req->owner ? req->owner : NULL;
}

int tb_dk_create(void *instance, const struct taskbox_create_req *req, char *id,
                 char *errbuf, size_t errlen)
{
	struct tb_dk *dk = instance;
	struct make_req m = {NULL, 0, 0, req_owner(req), 0};
	char cid[65];
	int code;

	m.lifetime = req->lifetime_s ? req->lifetime_s : dk->default_lifetime;
	m.deadline = (int64_t)time(NULL) + m.lifetime;
	if (m.owner) {
		code = tb_dk_owner_check(m.owner, errbuf, errlen);
		if (code != TASKBOX_OK)
			return code;
	}
	code = pick_image(dk, req->template_name, &m.image, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	tb_dk_sweep(dk);
	/* An engine without an init binary refuses at create (podman) or at
	 * start (Docker); under init "auto" the sandbox is made again
	 * without one. */
	m.init = tb_dk_want_init(dk);
	code = make_sandbox(dk, &m, cid, errbuf, errlen);
	if (code != TASKBOX_OK && m.init && tb_dk_init_missing(errbuf) &&
	    tb_dk_init_refused(dk, errbuf, errlen)) {
		m.init = 0;
		code = make_sandbox(dk, &m, cid, errbuf, errlen);
	}
	if (code != TASKBOX_OK)
		return code;
	memcpy(id, cid, sizeof(cid));
	return TASKBOX_OK;
}

/* Brings a stopped or paused sandbox back to running. */
static int wake(struct tb_dk *dk, const char *id, json_t *info, char *errbuf,
                size_t errlen)
{
	json_t *state = json_object_get(info, "State");
	const char *status =
	    json_string_value(json_object_get(state, "Status"));
	char path[128];

	if (json_is_true(json_object_get(state, "Running")) &&
	    !json_is_true(json_object_get(state, "Paused")))
		return TASKBOX_OK;
	if (json_is_true(json_object_get(state, "Paused"))) {
		snprintf(path, sizeof(path), "/containers/%s/unpause", id);
		return simple(dk, "POST", path, "cannot resume the sandbox",
		              errbuf, errlen);
	}
	if (status && (!strcmp(status, "removing") || !strcmp(status, "dead")))
		return tb_dk_fail(TASKBOX_E_GONE, errbuf, errlen,
		                  "sandbox %.12s is %s", id, status);
	snprintf(path, sizeof(path), "/containers/%s/start", id);
	return simple(dk, "POST", path, "cannot restart the stopped sandbox",
	              errbuf, errlen);
}

int tb_dk_connect_checked(struct tb_dk *dk, const char *id,
                          struct tb_dk_conn *c, char *errbuf, size_t errlen)
{
	struct tb_dk_sandbox_state st;
	json_t *info = NULL, *labels;
	int code;

	memset(&st, 0, sizeof(st));
	code = inspect(dk, id, &info, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	labels = json_object_get(json_object_get(info, "Config"), "Labels");
	if (!json_is_string(json_object_get(labels, TB_DK_LABEL_OWNER))) {
		json_decref(info);
		return tb_dk_fail(TASKBOX_E_NOT_FOUND, errbuf, errlen,
		                  "container %.12s is not a taskbox sandbox",
		                  id);
	}
	code = tb_dk_read_state(dk, id, &st, errbuf, errlen);
	if (code != TASKBOX_OK)
		goto out;
	if (st.deadline <= (int64_t)time(NULL)) {
		tb_dk_remove(dk, id, errbuf, errlen);
		code = tb_dk_fail(TASKBOX_E_GONE, errbuf, errlen,
		                  "sandbox %.12s expired and was removed", id);
		goto out;
	}
	code = wake(dk, id, info, errbuf, errlen);
	if (code != TASKBOX_OK)
		goto out;
	c->dk = dk;
	memcpy(c->id, id, 65);
	c->home = st.home;
	st.home = NULL;
	c->uid = st.uid;
	c->gid = st.gid;
	c->deadline = st.deadline;
	c->created = tb_dk_parse_time(
	    json_string_value(json_object_get(info, "Created")));
	tb_dk_owner_from_labels(labels, c->owner);
	c->from_cache = 0;
	tb_dk_cache_put(dk, c);
out:
	free(st.home);
	json_decref(info);
	return code;
}

int tb_dk_connect(void *instance, const char *sandbox_id, void **conn,
                  char *errbuf, size_t errlen)
{
	struct tb_dk *dk = instance;
	struct tb_dk_conn *c;
	int code = TASKBOX_OK;

	if (!tb_dk_valid_id(sandbox_id))
		return bad_id(errbuf, errlen);
	c = calloc(1, sizeof(*c));
	if (!c)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	c->dk = dk;
	memcpy(c->id, sandbox_id, 65);
	if (tb_dk_cache_get(dk, sandbox_id, c))
		c->from_cache = 1;
	else
		code = tb_dk_connect_checked(dk, sandbox_id, c, errbuf, errlen);
	if (code != TASKBOX_OK) {
		tb_dk_close(c);
		return code;
	}
	*conn = c;
	return TASKBOX_OK;
}

void tb_dk_close(void *conn)
{
	struct tb_dk_conn *c = conn;

	if (!c)
		return;
	free(c->home);
	free(c);
}

int tb_dk_destroy(void *instance, const char *sandbox_id, char *errbuf,
                  size_t errlen)
{
	struct tb_dk *dk = instance;
	json_t *info = NULL, *labels;
	int code;

	if (!tb_dk_valid_id(sandbox_id))
		return bad_id(errbuf, errlen);
	tb_dk_cache_drop(dk, sandbox_id);
	code = inspect(dk, sandbox_id, &info, errbuf, errlen);
	if (code != TASKBOX_OK)
		return code;
	labels = json_object_get(json_object_get(info, "Config"), "Labels");
	code = json_is_string(json_object_get(labels, TB_DK_LABEL_OWNER))
	           ? tb_dk_remove(dk, sandbox_id, errbuf, errlen)
	           : tb_dk_fail(TASKBOX_E_NOT_FOUND, errbuf, errlen,
	                        "container %.12s is not a taskbox sandbox",
	                        sandbox_id);
	json_decref(info);
	return code;
}
