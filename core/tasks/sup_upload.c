/* The static native supervisor, copied into remote sandboxes: by default
 * where it runs there, and into sandboxes without python3. */
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
/* Sandboxes remembered as running the static supervisor or not; one
 * forgotten is probed again by its next verb (one exec). */
#define DECIDED_MAX 1024

static pthread_once_t static_once = PTHREAD_ONCE_INIT;
static char host_path[PATH_MAX];
static char sandbox_path[64];
static unsigned char *image;
static size_t image_len;
static char machine[65];

static char pythonless[PYTHONLESS_MAX][TB_SANDBOX_REF_MAX];
static size_t pythonless_next;
static pthread_mutex_t pythonless_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	char id[TB_SANDBOX_REF_MAX];
	bool runs;
} decided[DECIDED_MAX];
static size_t decided_next;
static pthread_mutex_t decided_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* Why BOX's verbs run the static supervisor, for messages: its instance
 * asked for it, "has no python3", or it is the default there. */
const char *tb_sup_static_why(const struct tb_box *box)
{
	if (box->inst->supervisor == TB_SUP_MODE_STATIC)
		return "is set to run the static supervisor (its instance's "
		       "\"supervisor\": \"static\")";
	if (box->inst->supervisor == TB_SUP_MODE_PYTHON3)
		return "has no python3 (its instance's \"supervisor\": "
		       "\"python3\")";
	return tb_sup_pythonless(box) ? "has no python3"
	                              : "runs the static supervisor (the "
	                                "default on this provider)";
}

const char *tb_sup_static_remedy(const struct tb_box *box)
{
	if (box->inst->supervisor == TB_SUP_MODE_STATIC)
		return "set the instance's \"supervisor\" to \"auto\"";
	if (box->inst->supervisor == TB_SUP_MODE_PYTHON3 ||
	    tb_sup_pythonless(box))
		return "use an image with python3";
	return "set the instance's \"supervisor\" to \"python3\"";
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

/* A fresh name for an upload's temporary file in SANDBOX_DIR. */
static void tmp_name(char *out, size_t outlen)
{
	static atomic_uint serial;

	snprintf(out, outlen, SANDBOX_DIR "/.upload-%ld-%u", (long)getpid(),
	         atomic_fetch_add(&serial, 1));
}

int tb_sup_upload(struct tb_box *box, char *err, size_t errlen)
{
	static const char check[] =
	    "m=$(uname -m) && [ \"$m\" = \"$1\" ] || { printf %s \"$m\"; "
	    "exit 3; }; mkdir -p -m 700 -- \"$2\"";
	static const char place[] = "mv -f -- \"$1\" \"$2\"";
	const char *dest = tb_sup_static_sandbox_path();
	char tmp[128];
	int rc;

	if (box->inst->supervisor == TB_SUP_MODE_PYTHON3) {
		snprintf(err, errlen,
		         "sandbox %s %s, and the static supervisor is not "
		         "copied there; %s",
		         box->id, tb_sup_static_why(box),
		         tb_sup_static_remedy(box));
		return TASKBOX_E_UNSUPPORTED;
	}
	if (dest == NULL) {
		snprintf(err, errlen,
		         "sandbox %s %s, and this taskbox has no static "
		         "supervisor to copy there (" STATIC_NAME
		         " is not installed beside it); %s",
		         box->id, tb_sup_static_why(box),
		         tb_sup_static_remedy(box));
		return TASKBOX_E_UNSUPPORTED;
	}
	tmp_name(tmp, sizeof(tmp));
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

/* Whether this process decided BOX's sandbox: 1 runs the static
 * supervisor, 0 does not, -1 not decided yet. */
static int decided_for(const struct tb_box *box)
{
	int found = -1;

	pthread_mutex_lock(&decided_lock);
	for (size_t i = 0; i < DECIDED_MAX && found < 0; i++)
		if (decided[i].id[0] == box->id[0] &&
		    strcmp(decided[i].id, box->id) == 0)
			found = decided[i].runs;
	pthread_mutex_unlock(&decided_lock);
	return found;
}

static void decide(const struct tb_box *box, bool runs)
{
	pthread_mutex_lock(&decided_lock);
	snprintf(decided[decided_next].id, sizeof(decided[0].id), "%s",
	         box->id);
	decided[decided_next].runs = runs;
	decided_next = (decided_next + 1) % DECIDED_MAX;
	pthread_mutex_unlock(&decided_lock);
}

/* The probe's verdicts (exit statuses of the scripts below). */
enum {
	PROBE_RUNS = 0,
	PROBE_FOREIGN = 3, /* another machine type; prints it */
	PROBE_ABSENT = 4,  /* not there yet; its directory is made */
	PROBE_NO_RUN = 5,  /* there, but does not run (noexec, ENOEXEC) */
};

/* Runs `sh -c SCRIPT sh A1 A2 A3` in BOX; returns its exit status, or -1
 * when the exec itself failed (err says why). */
static int probe_exec(struct tb_box *box, const char *script, const char *a1,
                      const char *a2, const char *a3, char *err, size_t errlen)
{
	const char *argv[] = {"sh", "-c", script, "sh", a1, a2, a3, NULL};
	struct taskbox_exec_result res;
	int rc;

	rc = tb_box_exec(box, argv, NULL, 60000, 4096, NULL, NULL, &res, err,
	                 errlen);
	if (rc == TASKBOX_OK && res.timed_out) {
		snprintf(err, errlen, "timed out");
		rc = -1;
	} else if (rc == TASKBOX_OK) {
		rc = res.exit_code;
		snprintf(err, errlen, "%.*s",
		         (int)(res.out.len > 64 ? 64 : res.out.len),
		         res.out.data ? (const char *)res.out.data : "");
	} else {
		rc = -1;
	}
	tb_exec_result_free(&res);
	return rc;
}

/* Whether the static supervisor at $2 answers --help as itself; exits
 * PROBE_RUNS or PROBE_NO_RUN (and says how it failed). */
#define PROBE_RUN                                                              \
	"out=$(\"./$2\" --help 2>&1); r=$?; case $r:$out in "                  \
	"'0:{\"usage\":'*) exit 0;; esac; printf 'exit %s' \"$r\"; exit 5"

/* Copies the static supervisor into BOX where the probe found it absent,
 * and checks that it runs there. Returns a probe verdict, or -1. */
static int copy_in(struct tb_box *box, const char *dest, char *err,
                   size_t errlen)
{
	static const char place[] =
	    "mv -f -- \"$1\" \"$2\" || exit 1; " PROBE_RUN;
	char tmp[128];

	tmp_name(tmp, sizeof(tmp));
	if (tb_box_write(box, tmp, image, image_len, 0700, err, errlen) !=
	    TASKBOX_OK)
		return -1;
	return probe_exec(box, place, tmp, dest, "", err, errlen);
}

int tb_sup_static_runs(struct tb_box *box)
{
	static const char probe[] =
	    "if [ -f \"$2\" ]; then " PROBE_RUN "; fi; "
	    "m=$(uname -m) && [ \"$m\" = \"$1\" ] || { printf %s \"$m\"; "
	    "exit 3; }; mkdir -p -m 700 -- \"$3\" && exit 4";
	const char *dest = tb_sup_static_sandbox_path();
	char err[TB_ERR_MAX];
	int known = decided_for(box), v;

	if (known >= 0)
		return known;
	if (dest == NULL)
		return 0;
	v = probe_exec(box, probe, machine, dest, SANDBOX_DIR, err,
	               sizeof(err));
	if (v == PROBE_ABSENT)
		v = copy_in(box, dest, err, sizeof(err));
	if (v < 0) {
		/* The provider failed, not the binary: ask again next time. */
		tb_log(TB_LOG_DEBUG,
		       "sandbox %s: could not probe for the static supervisor "
		       "(%s); this verb uses python3",
		       box->id, err);
		return 0;
	}
	decide(box, v == PROBE_RUNS);
	if (v == PROBE_RUNS) {
		tb_log(TB_LOG_DEBUG,
		       "sandbox %s: its verbs use the static supervisor %s",
		       box->id, dest);
	} else if (v == PROBE_FOREIGN) {
		tb_log(TB_LOG_INFO,
		       "sandbox %s: the static supervisor does not run there "
		       "(the sandbox is %s, the static supervisor is built "
		       "for %s); its verbs use python3",
		       box->id, err, machine);
	} else {
		char how[16];

		snprintf(how, sizeof(how), "exit %d", v);
		tb_log(TB_LOG_INFO,
		       "sandbox %s: the static supervisor does not run there "
		       "(%s); its verbs use python3",
		       box->id, v == PROBE_NO_RUN ? err : how);
	}
	return v == PROBE_RUNS;
}
