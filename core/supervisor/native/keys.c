/* Idempotency keys: <root>/keys/<KEY>.task, a symlink to the id of the task
 * that KEY started, then '.' and the host's digest of the request when it
 * gave one (docs/supervisor.md, start step 1a and Keys). All of it runs
 * under the root's lock. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup.h"

#define KEY_PATH (TB_MAX_PATH + TB_MAX_KEY + 64)

static void key_path(const char *root, const char *key, char *path)
{
	snprintf(path, KEY_PATH, "%s/keys/%s.task", root, key);
}

/* The task id KEY's link names into ID (33 bytes), and the request kept
 * after it into REQUEST (TB_MAX_REQUEST + 1 bytes, "" when none): 1, or 0
 * when there is no link or it does not hold a task id. */
static int key_target(const char *root, const char *key, char *id,
                      char *request)
{
	char path[KEY_PATH], target[33 + TB_MAX_REQUEST + 1];
	ssize_t n;
	size_t r;

	key_path(root, key, path);
	n = readlink(path, target, sizeof(target));
	if (n < 32 || n == (ssize_t)sizeof(target) ||
	    (n > 32 && (target[32] != '.' || n == 33)))
		return 0;
	target[n] = '\0';
	r = n > 33 ? (size_t)n - 33 : 0;
	if (strspn(target + 33 - (r == 0), TB_REQUEST_CHARS) != r)
		return 0;
	memcpy(request, r ? target + 33 : "", r + 1);
	memcpy(id, target, 32);
	id[32] = '\0';
	return tb_is_task_name(id);
}

int tb_key_existing(const char *root, const char *key)
{
	char id[33], request[TB_MAX_REQUEST + 1], tdir[TB_MAX_PATH + 64];
	struct tb_str raw = {0}, out = {0}, extra = {0};
	struct tb_jobject *o;

	if (!key_target(root, key, id, request))
		return 0;
	o = malloc(sizeof(*o));
	if (!o)
		tb_oom();
	snprintf(tdir, sizeof(tdir), "%s/%s", root, id);
	/* A removed task or a start that died: the key is free and its link
	 * is replaced. A record that is not JSON is refused (internal). */
	if (tb_read_record(tdir, &raw, o) != 1) {
		tb_str_free(&raw);
		free(o);
		return 0;
	}
	tb_str_cstr(&extra, "\"existing\":true");
	/* Its characters need no escape. */
	if (request[0])
		tb_str_fmt(&extra, ",\"request\":\"%s\"", request);
	tb_add_members(&out, &raw, o, &extra);
	tb_say(&out);
	tb_str_free(&extra);
	tb_str_free(&out);
	tb_str_free(&raw);
	free(o);
	return 1;
}

int tb_key_link(const char *root, const char *key, const char *id,
                const char *request)
{
	char dir[TB_MAX_PATH + 16], path[KEY_PATH], tmp[KEY_PATH + 8];
	char target[33 + TB_MAX_REQUEST + 1];

	snprintf(dir, sizeof(dir), "%s/keys", root);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	key_path(root, key, path);
	/* Never a link's name: those end in ".task". */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	snprintf(target, sizeof(target), "%s%s%s", id, request ? "." : "",
	         request ? request : "");
	if (symlink(target, tmp) < 0)
		return -1;
	if (rename(tmp, path) < 0) {
		int saved = errno;

		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

void tb_key_release(const char *root, const struct tb_jobject *o,
                    const char *id)
{
	const struct tb_jmember *m = tb_jget(o, "idempotency_key");
	char key[TB_MAX_KEY + 1], target[33], request[TB_MAX_REQUEST + 1];
	char path[KEY_PATH];
	size_t n;

	if (!m || m->type != TB_J_STR)
		return;
	/* A valid key needs no escapes: its raw span is the key. */
	n = m->val_len - 2;
	if (n < 1 || n > TB_MAX_KEY)
		return;
	memcpy(key, m->val + 1, n);
	key[n] = '\0';
	if (strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                "0123456789_.-") != n)
		return;
	if (!key_target(root, key, target, request) || strcmp(target, id) != 0)
		return;
	key_path(root, key, path);
	unlink(path);
}
