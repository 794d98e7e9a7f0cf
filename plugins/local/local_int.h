/* The local provider's internal interface, shared by its source files.
 *
 * Layout of a sandbox on disk (the root is a setting):
 *   <root>/<id>/            mode 0700, the sandbox
 *   <root>/<id>/meta.json   one line: format, created, deadline, template,
 *                           isolation;
 *                           replaced atomically (temp file + rename)
 *   <root>/<id>/home/       the sandbox's home: exec's default cwd, and the
 *                           base of relative read_file/write_file paths
 *   <root>/<id>/tmp/        /tmp of commands run under bubblewrap
 *   <root>/<id>/reaper.pid  "<pgid> <pid>" of the sandbox's reaper
 *   <root>/.gone-<id>-<n>   a sandbox being destroyed (renamed first, so it
 *                           disappears from connect at once)
 *   <root>/.cgroup-<id>     the path of the sandbox's cgroup, when it has one
 *                           (outside the sandbox: no command rewrites it)
 *   <root>/.owner-<id>      {"format":1,"owner":O,"created":T}: who the
 *                           sandbox was made for, written once by create
 *                           before meta.json (owner.c; outside the sandbox,
 *                           invisible under bubblewrap)
 *
 * Every process started in a sandbox runs in the sandbox's cgroup where it
 * has one (cgroup.c) and carries TASKBOX_SANDBOX_ID=<id> in its
 * environment; destroy and the reaper kill the group, then what the process
 * tree links to the sandbox (proctree.c).
 */
#ifndef TB_LOCAL_INT_H
#define TB_LOCAL_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "taskbox/provider.h"

#define TB_LOCAL_NAME "local"
#define TB_LOCAL_ID_LEN 32
#define TB_LOCAL_MARKER "TASKBOX_SANDBOX_ID"

#define TB_HIDDEN __attribute__((visibility("hidden")))

/* Connections closed recently, kept open for the next connect to the same
 * sandbox (idle.c). */
#define TB_LOCAL_IDLE_MAX 16
struct tb_local_idle {
	pthread_mutex_t lock;
	struct tb_local_conn *conns[TB_LOCAL_IDLE_MAX]; /* oldest first */
	unsigned n;
};

/* A provider instance: read-only after init, so shared freely by threads,
 * but for its idle connections, which have their own lock, and its count of
 * kept descriptors, changed atomically. */
struct tb_local {
	const struct taskbox_host *host;
	char *root;       /* absolute, no trailing slash */
	int root_fd;      /* O_PATH directory descriptor of root */
	char **env;       /* settings env as "NAME=value", NULL-terminated */
	int bwrap;        /* nonzero: commands run under bubblewrap */
	char *bwrap_path; /* absolute path of bwrap when bwrap is set */
	uint32_t default_lifetime;
	uint32_t max_lifetime;
	char *cg_parent; /* where sandbox cgroups are made; NULL: none */
	int cg_spawn;    /* an enum tb_local_spawn_how: tests force one with
	                    TASKBOX_LOCAL_TEST_SPAWN (cgroup.c) */
	int no_openat2;  /* tests: TASKBOX_LOCAL_TEST_NO_OPENAT2 forces the walk
	                  */
	struct tb_local_idle idle;
	unsigned kept_total; /* kept descriptors of all connections (atomic) */
	unsigned kept_cap;   /* at most this many (tb_local_kept_cap) */
};

/* Descriptors connections keep for their next reads (kept.c): up to
 * TB_LOCAL_KEPT_MAX per connection (the three files of 16 tasks), and
 * TB_LOCAL_KEPT_TOTAL over all of an instance's connections, less when the
 * process may open few files (tb_local_kept_cap). */
#define TB_LOCAL_KEPT_MAX 48
#define TB_LOCAL_KEPT_TOTAL 256
struct tb_local_kept {
	char *rel;     /* the path as read (below dirfd); NULL: an empty slot */
	uint32_t hash; /* of rel, to skip most string compares */
	int dirfd;
	int fd;
	dev_t dev; /* the file it was opened on */
	ino_t ino;
	unsigned long used; /* the connection's kept_clock at its last read */
};

/* A connection to one sandbox; used by one thread at a time. */
struct tb_local_conn {
	struct tb_local *inst;
	char id[TB_LOCAL_ID_LEN + 1];
	char *dir;    /* <root>/<id> */
	char *home;   /* <root>/<id>/home */
	char *meta;   /* <root>/<id>/meta.json, bound read-only under bwrap */
	char *cgroup; /* the sandbox's cgroup directory; NULL: none */
	int dir_fd;   /* O_PATH descriptors */
	int home_fd;
	int64_t deadline; /* last deadline seen in meta.json */
	ino_t meta_ino;   /* which meta.json that was (replaced on writes) */
	struct timespec meta_mtime;
	char meta_path[TB_LOCAL_ID_LEN + 16]; /* <id>/meta.json */
	char marker[sizeof(TB_LOCAL_MARKER) + TB_LOCAL_ID_LEN + 1];
	struct tb_local_kept kept[TB_LOCAL_KEPT_MAX];
	unsigned long kept_clock;
	dev_t fs_dev; /* the sandbox's file system, once fs_known */
	int fs_known;
	int64_t created; /* from meta.json at connect */
	/* The owner record, read by the first describe (it never changes). */
	int owner_known;
	char owner[TASKBOX_OWNER_MAX];
	int64_t owner_created;
};

/* What meta.json records. */
struct tb_local_meta {
	int64_t created;
	int64_t deadline;
	char template_name[32];
	/* The isolation of the instance that made it: "none", "bwrap", or
	 * "" for a sandbox made before it was recorded. */
	char isolation[8];
	ino_t ino; /* of the file read */
	struct timespec mtime;
};

/* Writes a formatted one-line message into errbuf (any errlen >= 1). */
TB_HIDDEN void tb_local_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Maps an errno value to a taskbox status. */
TB_HIDDEN int tb_local_errno_status(int err);

/* Nonzero when s is a well-formed sandbox id (32 lowercase hex). */
TB_HIDDEN int tb_local_id_valid(const char *s);

/* Clamps a requested lifetime (0 = default) to the instance's maximum. */
TB_HIDDEN uint32_t tb_local_lifetime(const struct tb_local *L, uint32_t req);

/* Reads and validates path (relative to dirfd; NULL for "meta.json").
 * Returns 0 or an errno value (EPROTO when malformed). */
TB_HIDDEN int tb_local_meta_read(int dirfd, const char *path,
                                 struct tb_local_meta *m);

/* Replaces <dirfd>/meta.json atomically. Returns 0 or an errno value. */
TB_HIDDEN int tb_local_meta_write(int dirfd, const struct tb_local_meta *m);

/* 1 when meta.json is still the file c read (same inode and mtime: one
 * fstatat), else 0; *err gets the fstatat's errno (0 when it worked). */
TB_HIDDEN int tb_local_meta_unchanged(const struct tb_local_conn *c, int *err);

/* Checks before an op that the connection's sandbox still lives (one
 * fstatat of its meta.json, re-read only when replaced): destroyed or
 * expired gives TASKBOX_E_GONE, and an expired sandbox is removed. */
TB_HIDDEN int tb_local_conn_alive(struct tb_local_conn *c, char *errbuf,
                                  size_t errlen);

/* The same check for reads, which fail by themselves (and then ask
 * tb_local_conn_gone) when the sandbox is destroyed under them: the deadline
 * read at connect stands while it is ahead, with no system call; once it
 * has passed, tb_local_conn_alive decides. */
TB_HIDDEN int tb_local_conn_current(struct tb_local_conn *c, char *errbuf,
                                    size_t errlen);

/* The kept descriptor of rel below dirfd when rel still names the file it
 * was opened on; *st is then that file's fstatat. Else -1 (not kept, or
 * replaced or gone since: open it afresh); *err is always 0. The
 * descriptor stays the connection's. */
TB_HIDDEN int tb_local_kept_open(struct tb_local_conn *c, int dirfd,
                                 const char *rel, struct stat *st, int *err);

/* Offers fd, just opened as rel below dirfd with fstat st, for keeping.
 * Returns 1 when kept (the connection owns fd now; when it or the instance
 * is full, it closes its own least recently read one to make room), else 0
 * (not a regular file on the sandbox's file system, or nothing of this
 * connection's to give up: the caller closes fd). */
TB_HIDDEN int tb_local_kept_add(struct tb_local_conn *c, int dirfd,
                                const char *rel, int fd, const struct stat *st);

/* The instance-wide cap: TB_LOCAL_KEPT_TOTAL, or a quarter of the soft
 * limit on open files when that is lower. */
TB_HIDDEN unsigned tb_local_kept_cap(void);

/* Closes the kept descriptor fd (after a failed read), or every one. */
TB_HIDDEN void tb_local_kept_forget(struct tb_local_conn *c, int fd);
TB_HIDDEN void tb_local_kept_close(struct tb_local_conn *c);

/* Sets *dev to the device of the sandbox's file system; 0 when unknown. */
TB_HIDDEN int tb_local_sandbox_fs(struct tb_local_conn *c, dev_t *dev);

/* Nonzero when the connection's sandbox no longer exists (cheap: one
 * fstatat, for error paths). */
TB_HIDDEN int tb_local_conn_gone(struct tb_local_conn *c);

/* Frees a connection and closes its descriptors (close keeps it idle). */
TB_HIDDEN void tb_local_conn_free(struct tb_local_conn *c);

/* The idle connections (idle.c). take returns one to sandbox id that is
 * still current (its meta.json unchanged and not expired: one fstatat),
 * or NULL; a stale one is freed. put keeps c, freeing the oldest when
 * full. drop frees those of id (or all when id is NULL). */
TB_HIDDEN void tb_local_idle_init(struct tb_local_idle *idle);
TB_HIDDEN struct tb_local_conn *tb_local_idle_take(struct tb_local *L,
                                                   const char *id);
TB_HIDDEN void tb_local_idle_put(struct tb_local_conn *c);
TB_HIDDEN void tb_local_idle_drop(struct tb_local *L, const char *id);

/* Stops every process of the sandbox and removes <root>/<name> (a sandbox
 * directory or a renamed one). Returns 0 or an errno value. */
TB_HIDDEN int tb_local_remove(struct tb_local *L, const char *id,
                              const char *name);

/* Kills every process the process tree links to sandbox id (proctree.c):
 * its marker, its directory, its mount namespace, and their children,
 * groups and sessions. Returns 0, or EBUSY when some were left. */
TB_HIDDEN int tb_local_kill_tree(const char *root, const char *id);

/* The sandbox cgroups (cgroup.c). init picks the parent from the setting
 * ("auto" or NULL: the server's own group when usable, "off": none, or a
 * path that must work), and cg_spawn. create makes the group of id and its
 * record (0 without a parent; else 0 or an errno value). path returns the
 * recorded group of id, checked, malloc'ed, or NULL. open opens the group's
 * directory (O_PATH; -1 with errno, ENOENT when it is gone). remove kills
 * the group's processes and removes it and its record: 0 or an errno
 * value. */
TB_HIDDEN int tb_local_cgroup_init(struct tb_local *L, const char *setting,
                                   char *errbuf, size_t errlen);
TB_HIDDEN int tb_local_cgroup_create(struct tb_local *L, const char *id);
TB_HIDDEN char *tb_local_cgroup_path(struct tb_local *L, const char *id);
TB_HIDDEN int tb_local_cgroup_open(const char *group);
TB_HIDDEN int tb_local_cgroup_remove(struct tb_local *L, const char *id);

/* How tb_local_fork_exec puts the child in its group: clone3 into it
 * where the kernel can, else a fork whose child moves itself (AUTO, what
 * production uses); tests force the fork (FORK) or clone3 alone, its
 * failure the call's (CLONE3). */
enum tb_local_spawn_how {
	TB_LOCAL_SPAWN_AUTO,
	TB_LOCAL_SPAWN_FORK,
	TB_LOCAL_SPAWN_CLONE3
};

/* What tb_local_fork_exec starts: argv[0] is the path; fds[i] becomes
 * descriptor i of the child for i < nfds (each source either above nfds or
 * equal to its own target, or used before its number is a target); cwd
 * may be NULL; group_fd is the group's directory (tb_local_cgroup_open). */
struct tb_local_spawn {
	char *const *argv;
	char *const *envp;
	const char *cwd;
	const int *fds;
	int nfds;
	int group_fd;
	int how; /* enum tb_local_spawn_how */
};

/* Makes the child inside the group (clone3, or a fork and a move), sets it
 * up (its own process group, default signals, empty mask, fds) and execs
 * it (forkexec.c). Returns 0 with *pid, or the errno value of what failed
 * (ENOENT when the group is gone). */
TB_HIDDEN int tb_local_fork_exec(const struct tb_local_spawn *sp, pid_t *pid);

/* Opens path inside the directory root with flags, resolving every
 * component inside it (inroot.c): ".." stops at root, absolute links
 * start again from root, no magic link. Through openat2, or a walk with
 * O_NOFOLLOW at each step where openat2 is missing or no_openat2 is set.
 * Returns a descriptor or -errno. */
TB_HIDDEN int tb_local_open_in_root(int root, const char *path, int flags,
                                    int no_openat2);

/* Removes name (relative to dirfd) and everything below it without
 * following symbolic links. Returns 0 or an errno value (ENOENT is 0). */
TB_HIDDEN int tb_local_rmtree(int dirfd, const char *name);

/* Spawns path with argv and envp, stdin/stdout/stderr on /dev/null, in a
 * new session when setsid is nonzero, and waits for it. Returns its wait
 * status (>= 0) or -errno. */
TB_HIDDEN int tb_local_run_quiet(const char *path, char *const argv[],
                                 char *const envp[], int setsid);

/* Finds an executable named name in the ':'-separated search path (name
 * with a '/' is returned as is). Returns a malloc'ed path or NULL. */
TB_HIDDEN char *tb_local_which(const char *name, const char *path);

/* Starts the detached reaper of sandbox id (see reaper.c). Returns 0 or an
 * errno value. */
TB_HIDDEN int tb_local_reaper_start(struct tb_local *L, const char *id);

/* Stops the reaper of sandbox id whose directory is dirfd, if it runs. */
TB_HIDDEN void tb_local_reaper_stop(int dirfd, const char *id);

/* At init: removes expired and half-made sandboxes under the root and
 * restarts the reapers of live sandboxes that lost theirs. */
TB_HIDDEN void tb_local_sweep(struct tb_local *L);

/* The owner records (owner.c). check returns NULL when owner may be
 * recorded ("" included: no owner), else the rule it breaks. write makes
 * <root>/.owner-<id> atomically (temp file + rename). read fills owner and
 * *created: 0, ENOENT (a sandbox made before records existed) or another
 * errno value (EPROTO when malformed). remove unlinks the record of id.
 * sweep (init) removes the record name when its sandbox is gone. */
#define TB_LOCAL_OWNER_NAME_MAX (TB_LOCAL_ID_LEN + 16)
TB_HIDDEN const char *tb_local_owner_check(const char *owner);
TB_HIDDEN int tb_local_owner_write(struct tb_local *L, const char *id,
                                   const char *owner, int64_t created);
TB_HIDDEN int tb_local_owner_read(struct tb_local *L, const char *id,
                                  char owner[TASKBOX_OWNER_MAX],
                                  int64_t *created);
TB_HIDDEN void tb_local_owner_remove(struct tb_local *L, const char *id);
TB_HIDDEN void tb_local_owner_sweep(struct tb_local *L, const char *name);

/* The provider ops, one file per concern. */
TB_HIDDEN int tb_local_create(void *instance,
                              const struct taskbox_create_req *req, char *id,
                              char *errbuf, size_t errlen);
TB_HIDDEN int tb_local_connect(void *instance, const char *sandbox_id,
                               void **conn, char *errbuf, size_t errlen);
TB_HIDDEN void tb_local_close(void *conn);
TB_HIDDEN int tb_local_destroy(void *instance, const char *sandbox_id,
                               char *errbuf, size_t errlen);
TB_HIDDEN int tb_local_renew(void *conn, uint32_t lifetime_s, char *errbuf,
                             size_t errlen);
TB_HIDDEN int tb_local_exec(void *conn, const struct taskbox_exec_req *req,
                            struct taskbox_exec_result *res, char *errbuf,
                            size_t errlen);
TB_HIDDEN int tb_local_read_file(void *conn, const char *path, uint64_t offset,
                                 size_t length, struct taskbox_buf *data,
                                 uint64_t *file_size, char *errbuf,
                                 size_t errlen);
TB_HIDDEN int tb_local_write_file(void *conn, const char *path,
                                  const unsigned char *data, size_t len,
                                  uint32_t mode, char *errbuf, size_t errlen);
TB_HIDDEN int tb_local_describe(void *conn, struct taskbox_sandbox_info *info,
                                char *errbuf, size_t errlen);
TB_HIDDEN int tb_local_list(void *instance, const char *owner,
                            taskbox_list_fn each, void *arg, char *errbuf,
                            size_t errlen);

#endif /* TB_LOCAL_INT_H */
