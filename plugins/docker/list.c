/* docker provider: list (ABI 1.5). One GET /containers/json filtered by
 * the taskbox label (and the principal label when an owner is asked for),
 * each answer checked again here; then the state files of the containers
 * found, read side by side a few at a time, for their deadlines (renew
 * moves a deadline there, never in the labels). Expired sandboxes, and
 * containers not started yet or being removed, are left out. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker.h"

/* State files read side by side at most. */
#define LIST_BATCH 8
/* Bytes of a state file read at most. */
#define STATE_MAX 65536

/* One container the engine listed that passed the checks. */
struct found {
	char id[65];
	char owner[TASKBOX_OWNER_MAX];
	int64_t created;
	int64_t deadline; /* the label's until the state file is read */
	int skip;         /* gone or expired: not listed */
};

/* The path of GET /containers/json for owner (NULL or "": any). */
static char *list_path(const char *owner)
{
	json_t *labels = json_pack("[s]", TB_DK_LABEL_OWNER "=1");
	json_t *filters = labels ? json_pack("{so}", "label", labels) : NULL;
	char *text = NULL, *esc = NULL, *path = NULL, *pl;
	size_t n;

	if (filters && owner && *owner) {
		n = strlen(TB_DK_LABEL_PRINCIPAL) + strlen(owner) + 2;
		pl = malloc(n);
		if (pl) {
			snprintf(pl, n, "%s=%s", TB_DK_LABEL_PRINCIPAL, owner);
			json_array_append_new(labels, json_string(pl));
			free(pl);
		}
		if (!pl || json_array_size(labels) != 2) {
			json_decref(filters);
			return NULL;
		}
	}
	text = filters ? json_dumps(filters, JSON_COMPACT) : NULL;
	json_decref(filters);
	esc = text ? tb_dk_escape(text) : NULL;
	free(text);
	if (!esc)
		return NULL;
	n = strlen(esc) + 64;
	path = malloc(n);
	if (path)
		snprintf(path, n, "/containers/json?all=true&filters=%s", esc);
	curl_free(esc);
	return path;
}

/* Whether a listed container is a sandbox to report: taskbox's, owned by
 * owner (when not NULL), started and not being removed; fills f. */
static int take(json_t *item, const char *owner, struct found *f)
{
	json_t *labels = json_object_get(item, "Labels");
	json_t *created = json_object_get(item, "Created");
	const char *id = json_string_value(json_object_get(item, "Id"));
	const char *state = json_string_value(json_object_get(item, "State"));
	const char *dl =
	    json_string_value(json_object_get(labels, TB_DK_LABEL_DEADLINE));

	if (!id || !tb_dk_valid_id(id) ||
	    !json_is_string(json_object_get(labels, TB_DK_LABEL_OWNER)))
		return 0;
	if (state &&
	    (!strcmp(state, "created") || !strcmp(state, "configured") ||
	     !strcmp(state, "removing") || !strcmp(state, "dead")))
		return 0;
	memset(f, 0, sizeof(*f));
	tb_dk_owner_from_labels(labels, f->owner);
	if (owner && strcmp(owner, f->owner))
		return 0;
	memcpy(f->id, id, 65);
	f->created = json_is_integer(created)
	                 ? json_integer_value(created)
	                 : tb_dk_parse_time(json_string_value(created));
	f->deadline = dl ? strtoll(dl, NULL, 10) : 0;
	return 1;
}

/* The deadline in a state file's text, or 0. */
static int64_t state_deadline(const unsigned char *text, size_t len)
{
	json_t *j = json_loadb((const char *)text, len, 0, NULL);
	json_t *dl = json_object_get(j, "deadline");
	int64_t v = json_is_integer(dl) ? json_integer_value(dl) : 0;

	json_decref(j);
	return v;
}

/* Settles f's deadline after a state read that failed: read again with
 * tb_dk_read_state's retries (a renewal may be rewriting the file); a
 * container gone meanwhile is skipped; otherwise the deadline is unknown
 * (0). */
static void settle_slow(struct tb_dk *dk, struct found *f)
{
	char why[TASKBOX_ERRBUF_SIZE];
	struct tb_dk_sandbox_state st;

	if (tb_dk_read_state(dk, f->id, &st, why, sizeof(why)) == TASKBOX_OK)
		f->deadline = st.deadline;
	else if (tb_dk_container_state(dk, f->id) == TB_DK_MISSING)
		f->skip = 1;
	else
		f->deadline = 0;
	free(st.home);
}

/* Reads the state files of fs[0..n) side by side and sets each deadline
 * (or skip). Fails only when the transfers could not run at all. */
static int read_deadlines(struct tb_dk *dk, struct found *fs, size_t n,
                          char *errbuf, size_t errlen)
{
	struct tb_dk_fetch f[LIST_BATCH];
	CURL *hs[LIST_BATCH];
	CURLcode rcs[LIST_BATCH];
	char why[TASKBOX_ERRBUF_SIZE];
	size_t k, started = 0;
	int code = TASKBOX_OK, rc;

	memset(f, 0, sizeof(f));
	for (k = 0; k < n && code == TASKBOX_OK; k++) {
		f[k].end = STATE_MAX;
		f[k].alloc = malloc;
		code = tb_dk_fetch_begin(dk, fs[k].id, TB_DK_STATE_PATH, &f[k],
		                         errbuf, errlen);
		if (code != TASKBOX_OK)
			tb_tar_reader_free(&f[k].t);
		else
			hs[started++] = f[k].h;
	}
	if (code == TASKBOX_OK)
		code = tb_dk_perform_all(dk, hs, rcs, started, NULL, NULL,
		                         errbuf, errlen);
	for (k = 0; k < started; k++) {
		if (code != TASKBOX_OK) {
			curl_easy_cleanup(f[k].h);
			tb_tar_reader_free(&f[k].t);
			tb_dk_resp_free(&f[k].err);
			free(f[k].buf);
			continue;
		}
		rc = tb_dk_fetch_end(dk, TB_DK_STATE_PATH, &f[k], rcs[k], why,
		                     sizeof(why));
		if (rc == TASKBOX_OK && f[k].t.kind == TB_TAR_FILE &&
		    f[k].t.size < STATE_MAX && f[k].len == f[k].t.size &&
		    state_deadline(f[k].buf, f[k].len))
			fs[k].deadline = state_deadline(f[k].buf, f[k].len);
		else
			settle_slow(dk, &fs[k]);
		free(f[k].buf);
	}
	return code;
}

int tb_dk_list(void *instance, const char *owner, taskbox_list_fn each,
               void *arg, char *errbuf, size_t errlen)
{
	struct tb_dk *dk = instance;
	struct taskbox_sandbox_info info;
	struct tb_dk_resp r;
	struct found *fs = NULL;
	json_t *list = NULL, *item;
	size_t i, n = 0;
	char *path;
	int code, stop = 0;

	/* No sandbox can have an owner that create would refuse. */
	if (owner && *owner && !tb_dk_owner_valid(owner))
		return TASKBOX_OK;
	path = list_path(owner);
	if (!path)
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	code =
	    tb_dk_request(dk, "GET", path, NULL, NULL, 0, &r, errbuf, errlen);
	free(path);
	if (code != TASKBOX_OK)
		return code;
	if (r.status != 200) {
		code = tb_dk_http_error(&r, "cannot list the sandboxes", errbuf,
		                        errlen);
		tb_dk_resp_free(&r);
		return code;
	}
	list = json_loadb(r.body, r.len, 0, NULL);
	tb_dk_resp_free(&r);
	if (!json_is_array(list)) {
		json_decref(list);
		return tb_dk_fail(TASKBOX_E_PROTOCOL, errbuf, errlen,
		                  "the engine's container list is not a JSON "
		                  "array");
	}
	fs = calloc(json_array_size(list) + 1, sizeof(*fs));
	if (!fs) {
		json_decref(list);
		return tb_dk_fail(TASKBOX_E_NOMEM, errbuf, errlen, "no memory");
	}
	json_array_foreach(list, i, item)
	{
		if (take(item, owner, &fs[n]))
			n++;
	}
	json_decref(list);
	for (i = 0; i < n && !stop && code == TASKBOX_OK; i += LIST_BATCH) {
		size_t m = n - i < LIST_BATCH ? n - i : LIST_BATCH;
		code = read_deadlines(dk, fs + i, m, errbuf, errlen);
		for (size_t k = i; k < i + m && code == TASKBOX_OK && !stop;
		     k++) {
			/* Expired: the next sweep removes it. */
			if (fs[k].skip ||
			    (fs[k].deadline &&
			     fs[k].deadline <= (int64_t)time(NULL)))
				continue;
			memset(&info, 0, sizeof(info));
			info.struct_size = sizeof(info);
			tb_dk_fill_info(&info, fs[k].id, fs[k].owner,
			                fs[k].created, fs[k].deadline);
			stop = each(arg, &info) != 0;
		}
	}
	free(fs);
	return code;
}
