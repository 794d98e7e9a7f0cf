/* Shared plumbing of the local provider's tests: the module loaded through
 * libltdl, a host whose allocator is libc's, and a temporary root. */
#ifndef TB_TEST_LOCAL_HELPER_H
#define TB_TEST_LOCAL_HELPER_H

#include <stddef.h>
#include <stdint.h>

#include "taskbox/provider.h"

/* The loaded descriptor (set by tl_setup). */
extern const struct taskbox_provider *tl_p;
/* A host lending malloc/realloc/free. */
extern const struct taskbox_host tl_host;
/* The temporary root of this test (set by tl_setup). */
extern char tl_root[256];
/* An error buffer for ops. */
extern char tl_err[TASKBOX_ERRBUF_SIZE];

/* Fixtures: load the module and make a temporary root; destroy every
 * sandbox left in it, remove it and unload. */
void tl_setup(void);
void tl_teardown(void);

/* init with settings (a JSON text; "%s" in it is replaced by tl_root). */
int tl_init(const char *settings_fmt, void **inst);
/* init with {"root": tl_root} and assert success. */
void *tl_init_ok(void);
/* init with {"root": tl_root, "isolation": "bwrap"}; skips the test where
 * bubblewrap is not installed or cannot run. */
void *tl_bwrap_init_ok(void);

/* create (asserting success) and connect. tl_create waits until the new
 * sandbox's reaper has read its deadline and sleeps. */
void tl_create(void *inst, uint32_t lifetime_s,
               char id[TASKBOX_SANDBOX_ID_MAX]);
/* tl_create for owner (NULL: none). */
void tl_create_owned(void *inst, uint32_t lifetime_s, const char *owner,
                     char id[TASKBOX_SANDBOX_ID_MAX]);
void *tl_connect(void *inst, const char *id);

/* Runs argv (NULL-terminated list of strings) with timeout_ms and
 * output_limit; returns the op's status and fills res. */
int tl_exec(void *conn, struct taskbox_exec_result *res, uint32_t timeout_ms,
            size_t limit, const char *const *env, const char *cwd,
            const char *argv0, ...);
/* Runs "sh -c script" with a 20 s timeout and asserts it worked. */
void tl_sh(void *conn, struct taskbox_exec_result *res, const char *script);
void tl_res_free(struct taskbox_exec_result *res);

/* The number stdout of res starts with (asserting there is one). */
long tl_out_long(const struct taskbox_exec_result *res);
/* Nonzero while process pid exists and is not a zombie. */
int tl_pid_alive(long pid);
/* Waits up to ms for path to disappear; returns nonzero if it did. */
int tl_wait_gone(const char *path, int ms);
/* Nonzero when a path exists. */
int tl_exists(const char *path);

/* The number of open descriptors of this process. */
int tl_open_fds(void);
/* Milliseconds of CLOCK_MONOTONIC. */
int64_t tl_now_ms(void);
/* Rewrites the deadline in <root>/<id>/meta.json. */
void tl_set_deadline(const char *id, int64_t deadline);
/* Nonzero when running under valgrind. */
int tl_under_valgrind(void);

#endif
