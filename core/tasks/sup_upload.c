/* The static native supervisor, uploaded into sandboxes without python3. */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/log.h"
#include "tasks/sup_native.h"
#include "tasks/sup_upload.h"

#define STATIC_NAME "taskbox-supervisor-static"
#define SANDBOX_DIR ".taskbox/bin"
/* Far more than the binary (about 0.7 MiB); a bigger file is not ours. */
#define STATIC_MAX (16 * 1024 * 1024)
/* Sandboxes remembered as having no python3. */
#define PYTHONLESS_MAX 256

static pthread_once_t static_once = PTHREAD_ONCE_INIT;
static char host_path[PATH_MAX];
static char sandbox_path[64];
static unsigned char *image;
static size_t image_len;
static char machine[65];

static char pythonless[PYTHONLESS_MAX][TB_SANDBOX_REF_MAX];
static size_t pythonless_next;
static pthread_mutex_t pythonless_lock = PTHREAD_MUTEX_INITIALIZER;

/* Reads the whole file at PATH into image; 0, or -1 with a logged reason. */
static int load_image(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 20;

	if (f == NULL || (image = malloc(cap)) == NULL)
		goto fail;
	for (;;) {
		size_t n = fread(image + image_len, 1, cap - image_len, f);

		image_len += n;
		if (n == 0)
			break;
		if (image_len == cap) {
			unsigned char *bigger;

			if (cap >= STATIC_MAX ||
			    (bigger = realloc(image, cap * 2)) == NULL)
				goto fail;
			image = bigger;
			cap *= 2;
		}
	}
	if (ferror(f) || image_len == 0)
		goto fail;
	fclose(f);
	return 0;
fail:
	tb_log(TB_LOG_WARN, "cannot read the static supervisor %s", path);
	if (f)
		fclose(f);
	free(image);
	image = NULL;
	image_len = 0;
	return -1;
}

/* FNV-1a, 64 bits: names the binary by its content, so a sandbox never runs
 * one version's file for another's (not a security check: the sandbox's
 * user owns the file either way). */
static uint64_t content_hash(const unsigned char *p, size_t n)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

static void find_static(void)
{
	const char *env = getenv("TASKBOX_SUPERVISOR_STATIC");
	struct utsname u;
	int found;

	if (env && *env)
		found = tb_sup_env_program("TASKBOX_SUPERVISOR_STATIC",
		                           host_path, sizeof(host_path));
	else
		found = tb_sup_find_program(STATIC_NAME, host_path,
		                            sizeof(host_path));
	if (uname(&u) == 0)
		snprintf(machine, sizeof(machine), "%s", u.machine);
	if (found && load_image(host_path) == 0)
		snprintf(sandbox_path, sizeof(sandbox_path),
		         SANDBOX_DIR "/taskbox-supervisor-%016llx",
		         (unsigned long long)content_hash(image, image_len));
	tb_log(TB_LOG_DEBUG, "static supervisor: %s",
	       sandbox_path[0] ? host_path : "none");
}

const char *tb_sup_static_host_path(void)
{
	pthread_once(&static_once, find_static);
	return host_path[0] ? host_path : NULL;
}

const char *tb_sup_static_sandbox_path(void)
{
	pthread_once(&static_once, find_static);
	return sandbox_path[0] ? sandbox_path : NULL;
}

/* Whether id is in the ring; the caller holds pythonless_lock. */
static bool pythonless_locked(const char *id)
{
	for (size_t i = 0; i < PYTHONLESS_MAX; i++)
		if (strcmp(pythonless[i], id) == 0)
			return true;
	return false;
}

bool tb_sup_pythonless(const struct tb_box *box)
{
	bool found;

	pthread_mutex_lock(&pythonless_lock);
	found = pythonless_locked(box->id);
	pthread_mutex_unlock(&pythonless_lock);
	return found;
}

void tb_sup_mark_pythonless(const struct tb_box *box)
{
	bool added = false;

	/* One critical section: two first verbs racing add the id once. */
	pthread_mutex_lock(&pythonless_lock);
	if (!pythonless_locked(box->id)) {
		snprintf(pythonless[pythonless_next], sizeof(pythonless[0]),
		         "%s", box->id);
		pythonless_next = (pythonless_next + 1) % PYTHONLESS_MAX;
		added = true;
	}
	pthread_mutex_unlock(&pythonless_lock);
	if (!added)
		return;
	tb_log(TB_LOG_INFO,
	       "sandbox %s has no python3: its verbs use the static supervisor",
	       box->id);
}

/* Why BOX's verbs run the static supervisor, for messages: "has no
 * python3", or its instance asked for it. */
const char *tb_sup_static_why(const struct tb_box *box)
{
	return box->inst->static_supervisor
	           ? "is set to run the static supervisor (its instance's "
	             "\"supervisor\": \"static\")"
	           : "has no python3";
}

const char *tb_sup_static_remedy(const struct tb_box *box)
{
	return box->inst->static_supervisor
	           ? "set the instance's \"supervisor\" to \"auto\""
	           : "use an image with python3";
}

/* Runs `sh -c SCRIPT sh ARG1 ARG2`; err says what failed. Returns the
 * provider's status, or TASKBOX_E_UNSUPPORTED/TASKBOX_E_IO with err set
 * when the script failed. */
static int run_script(struct tb_box *box, const char *script, const char *a1,
                      const char *a2, char *err, size_t errlen)
{
	const char *argv[] = {"sh", "-c", script, "sh", a1, a2, NULL};
	struct taskbox_exec_result res;
	const char *path = tb_sup_static_host_path();
	int rc;

	rc = tb_box_exec(box, argv, NULL, 60000, 4096, NULL, NULL, &res, err,
	                 errlen);
	if (rc != TASKBOX_OK)
		goto out;
	if (res.exit_code == 3) {
		snprintf(err, errlen,
		         "sandbox %s %s, and the static supervisor (%s) is "
		         "built for %s while the sandbox is %.*s: %s",
		         box->id, tb_sup_static_why(box), path, machine,
		         (int)(res.out.len > 64 ? 64 : res.out.len),
		         res.out.data ? (const char *)res.out.data : "?",
		         tb_sup_static_remedy(box));
		rc = TASKBOX_E_UNSUPPORTED;
	} else if (res.exit_code != 0 || res.timed_out) {
		snprintf(err, errlen,
		         "sandbox %s %s, and placing the static supervisor "
		         "there failed (exit %d%s): %.*s",
		         box->id, tb_sup_static_why(box), res.exit_code,
		         res.timed_out ? ", timed out" : "",
		         (int)(res.err.len > 300 ? 300 : res.err.len),
		         res.err.data ? (const char *)res.err.data : "");
		rc = res.exit_code == 126 || res.exit_code == 127
		         ? TASKBOX_E_UNSUPPORTED
		         : TASKBOX_E_IO;
	}
out:
	tb_exec_result_free(&res);
	return rc;
}

int tb_sup_upload(struct tb_box *box, char *err, size_t errlen)
{
	static const char check[] =
	    "m=$(uname -m) && [ \"$m\" = \"$1\" ] || { printf %s \"$m\"; "
	    "exit 3; }; mkdir -p -m 700 -- \"$2\"";
	static const char place[] = "mv -f -- \"$1\" \"$2\"";
	static atomic_uint serial;
	const char *dest = tb_sup_static_sandbox_path();
	char tmp[128];
	int rc;

	if (dest == NULL) {
		snprintf(err, errlen,
		         "sandbox %s %s, and this taskbox has no static "
		         "supervisor to copy there (" STATIC_NAME
		         " is not installed beside it); %s",
		         box->id, tb_sup_static_why(box),
		         tb_sup_static_remedy(box));
		return TASKBOX_E_UNSUPPORTED;
	}
	snprintf(tmp, sizeof(tmp), SANDBOX_DIR "/.upload-%ld-%u",
	         (long)getpid(), atomic_fetch_add(&serial, 1));
	rc = run_script(box, check, machine, SANDBOX_DIR, err, errlen);
	if (rc == TASKBOX_OK)
		rc =
		    tb_box_write(box, tmp, image, image_len, 0700, err, errlen);
	if (rc == TASKBOX_OK)
		rc = run_script(box, place, tmp, dest, err, errlen);
	if (rc == TASKBOX_OK)
		tb_log(TB_LOG_INFO,
		       "sandbox %s: copied the static supervisor to %s",
		       box->id, dest);
	return rc;
}
