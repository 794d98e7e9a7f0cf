/* docker provider: lifetimes. Labels cannot change after create and a
 * renewal must outlive the server, so each sandbox's deadline (with its
 * home and user ids) lives in a root-owned state file inside it, rewritten
 * by renew. Expired sandboxes are removed when an instance starts, on every
 * create (tb_dk_sweep), and by connect. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker.h"

/* Writes the state file with the given values. */
int tb_dk_write_state(struct tb_dk *dk, const char *id, int64_t deadline,
                      const char *home, long uid, long gid, char *errbuf,
                      size_t errlen)
{
	json_t *j = json_pack("{sI sI ss sI sI}", "format", (json_int_t)1,
	                      "deadline", (json_int_t)deadline, "home", home,
	                      "uid", (json_int_t)uid, "gid", (json_int_t)gid);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	int code;

	json_decref(j);
	if (!text)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	code = tb_dk_put_file(dk, id, TB_DK_STATE_DIR, TB_DK_STATE_NAME, text,
	                      strlen(text), 0644, 0, 0, errbuf, errlen);
	free(text);
	return code;
}

/* One read of the state file; see tb_dk_read_state. */
static int read_state_once(struct tb_dk *dk, const char *id,
                           struct tb_dk_sandbox_state *st, char *errbuf,
                           size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	json_t *j;
	int code;

	memset(st, 0, sizeof(*st));
	code = tb_dk_read_small(dk, id, TB_DK_STATE_PATH, 65536, &text, &len,
	                        errbuf, errlen);
	if (code == TASKBOX_E_NOT_FOUND)
		return tb_dk_fail(TASKBOX_E_PROTOCOL, errbuf, errlen,
		                  "sandbox %.12s has no %s (not made by this "
		                  "plugin, or damaged)",
		                  id, TB_DK_STATE_PATH);
	if (code != TASKBOX_OK)
		return code;
	j = json_loadb(text, len, 0, NULL);
	free(text);
	if (!json_is_integer(json_object_get(j, "deadline")) ||
	    !json_is_string(json_object_get(j, "home"))) {
		json_decref(j);
		return tb_dk_fail(TASKBOX_E_PROTOCOL, errbuf, errlen,
		                  "sandbox %.12s: malformed %s", id,
		                  TB_DK_STATE_PATH);
	}
	st->deadline = json_integer_value(json_object_get(j, "deadline"));
	st->uid = (long)json_integer_value(json_object_get(j, "uid"));
	st->gid = (long)json_integer_value(json_object_get(j, "gid"));
	st->home = strdup(json_string_value(json_object_get(j, "home")));
	json_decref(j);
	if (!st->home)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	return TASKBOX_OK;
}

/* A renewal rewrites the state file through the engine's archive upload,
 * which is not atomic: a read at that moment may find no file (the engine
 * then sends an archive with no entry, a 404, or a 500 "no such file or
 * directory"), or a partial one. Such a read is made again, after 10 ms,
 * doubling up to 640 ms (about 1.3 s in all), before its error stands. */
#define STATE_TRIES 8

int tb_dk_read_state(struct tb_dk *dk, const char *id,
                     struct tb_dk_sandbox_state *st, char *errbuf,
                     size_t errlen)
{
	struct timespec pause = {0, 10 * 1000000L};
	int code;

	for (int i = 1;; i++) {
		code = read_state_once(dk, id, st, errbuf, errlen);
		if (i == STATE_TRIES || (code != TASKBOX_E_PROTOCOL &&
		                         code != TASKBOX_E_UNSUPPORTED &&
		                         code != TASKBOX_E_UNAVAILABLE))
			return code;
		free(st->home);
		st->home = NULL;
		nanosleep(&pause, NULL);
		pause.tv_nsec *= 2;
	}
}

/* renew once, on c as it is. A sandbox removed behind our back is GONE. */
static int renew_once(struct tb_dk_conn *c, int64_t deadline, char *errbuf,
                      size_t errlen)
{
	int code = tb_dk_write_state(c->dk, c->id, deadline, c->home, c->uid,
	                             c->gid, errbuf, errlen);

	if (code == TASKBOX_E_NOT_FOUND &&
	    tb_dk_container_state(c->dk, c->id) == TB_DK_MISSING)
		code = tb_dk_fail(TASKBOX_E_GONE, errbuf, errlen,
		                  "sandbox %.12s was removed", c->id);
	return code;
}

int tb_dk_renew(void *conn, uint32_t lifetime_s, char *errbuf, size_t errlen)
{
	struct tb_dk_conn *c = conn;
	int64_t deadline = (int64_t)time(NULL) + lifetime_s;
	int code;

	if (!lifetime_s)
		return tb_dk_fail(TASKBOX_E_INVALID, errbuf, errlen,
		                  "renew: lifetime must be at least 1 second");
	code = renew_once(c, deadline, errbuf, errlen);
	if (code != TASKBOX_OK && tb_dk_recheck(c, &code, errbuf, errlen))
		code = renew_once(c, deadline, errbuf, errlen);
	if (code == TASKBOX_OK) {
		c->deadline = deadline;
		tb_dk_cache_renewed(c->dk, c->id, deadline);
	}
	return code;
}

/* Removes id when its effective deadline (state file, else label) passed. */
static void sweep_one(struct tb_dk *dk, const char *id, int64_t label_dl)
{
	char err[TASKBOX_ERRBUF_SIZE], line[TASKBOX_ERRBUF_SIZE + 64];
	struct tb_dk_sandbox_state st;
	int64_t now = (int64_t)time(NULL), dl = label_dl;

	/* Renewals only ever live in the state file: read it only when the
	 * label's deadline has passed. */
	if (label_dl > now)
		return;
	if (tb_dk_read_state(dk, id, &st, err, sizeof(err)) == TASKBOX_OK)
		dl = st.deadline;
	free(st.home);
	if (dl > now)
		return;
	if (tb_dk_remove(dk, id, err, sizeof(err)) != TASKBOX_OK && dk->host &&
	    dk->host->log) {
		snprintf(line, sizeof(line),
		         "removing expired sandbox %.12s: %s", id, err);
		dk->host->log(TASKBOX_LOG_WARN, TB_DK_NAME, line);
	}
}

void tb_dk_sweep(struct tb_dk *dk)
{
	char err[TASKBOX_ERRBUF_SIZE], path[256], *filters;
	struct tb_dk_resp r;
	json_t *list, *item;
	size_t i;

	filters = tb_dk_escape("{\"label\":[\"" TB_DK_LABEL_OWNER "=1\"]}");
	if (!filters)
		return;
	snprintf(path, sizeof(path), "/containers/json?all=true&filters=%s",
	         filters);
	curl_free(filters);
	if (tb_dk_request(dk, "GET", path, NULL, NULL, 0, &r, err,
	                  sizeof(err)) != TASKBOX_OK)
		return;
	list = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
	tb_dk_resp_free(&r);
	json_array_foreach(list, i, item)
	{
		const char *id = json_string_value(json_object_get(item, "Id"));
		const char *dl = json_string_value(json_object_get(
		    json_object_get(item, "Labels"), TB_DK_LABEL_DEADLINE));
		if (id && tb_dk_valid_id(id) && dl)
			sweep_one(dk, id, strtoll(dl, NULL, 10));
	}
	json_decref(list);
}
