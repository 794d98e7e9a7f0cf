/* docker provider: internal declarations shared by its files. */
#ifndef TB_DOCKER_H
#define TB_DOCKER_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>

#include <curl/curl.h>
#include <jansson.h>

#include "taskbox/provider.h"

#define TB_DK_NAME "docker"
/* The newest Engine API version this plugin speaks. */
#define TB_DK_API_MAX_MAJOR 1
#define TB_DK_API_MAX_MINOR 47
/* Labels on every container this plugin makes. */
#define TB_DK_LABEL_OWNER "org.taskbox.sandbox"
#define TB_DK_LABEL_LIFETIME "org.taskbox.lifetime"
#define TB_DK_LABEL_DEADLINE "org.taskbox.deadline"
/* The principal a sandbox was made for (ABI 1.5), absent when none. */
#define TB_DK_LABEL_PRINCIPAL "org.taskbox.principal"
/* The sandbox's state file (deadline, home, uid, gid), owned by root. */
#define TB_DK_STATE_DIR "/"
#define TB_DK_STATE_NAME ".taskbox-sandbox.json"
#define TB_DK_STATE_PATH "/.taskbox-sandbox.json"
/* Request timeouts (ms). */
#define TB_DK_CONNECT_TIMEOUT_MS 5000
#define TB_DK_REQUEST_TIMEOUT_MS 60000

/* The init setting: ask for the engine's init always, never, or while
 * the engine has one. */
enum tb_dk_init { TB_DK_INIT_AUTO, TB_DK_INIT_ON, TB_DK_INIT_OFF };

/* Idle multi handles of an instance; each keeps its engine connections
 * open (keep-alive) for the next request that takes it (pool.c). */
#define TB_DK_POOL_MAX 8
struct tb_dk_pool {
	pthread_mutex_t lock;
	CURLM *idle[TB_DK_POOL_MAX];
	size_t n_idle;
};

/* What connect learnt of one sandbox, kept for connection_reuse seconds
 * (conn_cache.c). */
struct tb_dk_known {
	char id[65];
	char *home;
	long uid, gid;
	int64_t deadline; /* the state file's, wall clock seconds */
	int64_t created;  /* the container's Created, or 0 */
	char owner[TASKBOX_OWNER_MAX]; /* its principal label, or "" */
	uint64_t checked_ms;           /* monotonic ms of the check */
	struct tb_dk_known *next;
};
struct tb_dk_cache {
	pthread_mutex_t lock;
	struct tb_dk_known *head;
	size_t count;
};

/* One provider instance: its settings and the negotiated API version. */
struct tb_dk {
	const struct taskbox_host *host;
	char *host_url;  /* the setting as given, for messages */
	char *sock_path; /* unix socket path, or NULL for tcp */
	char *base_url;  /* http://localhost or http(s)://HOST:PORT */
	char *tls_dir;   /* ca.pem, cert.pem, key.pem; NULL without TLS */
	int tls_verify;
	char *image;
	json_t *templates; /* object: template name -> image, or NULL */
	json_t *env;       /* array of "NAME=value" for every container */
	char *network;
	int64_t memory;     /* bytes, 0 = unset */
	int64_t nano_cpus;  /* 0 = unset */
	int64_t pids_limit; /* 0 = unset */
	uint32_t default_lifetime;
	char *user;    /* NULL = the image's */
	char *workdir; /* NULL = the image's or the user's home */
	enum tb_dk_init init;
	uint32_t reuse_s; /* connection_reuse: 0 = connect checks every time */
	struct tb_dk_pool pool;
	struct tb_dk_cache known;

	pthread_mutex_t lock; /* guards the three fields below */
	int negotiated;
	char api[16];    /* "1.41" */
	int init_absent; /* init "auto" found the engine without one */
};

/* One attached sandbox. */
struct tb_dk_conn {
	struct tb_dk *dk;
	char id[65];
	char *home;
	long uid, gid;
	int64_t deadline; /* as connect learnt it, moved by renew */
	int64_t created;  /* the container's Created, or 0 */
	char owner[TASKBOX_OWNER_MAX]; /* its principal label, or "" */
	int from_cache; /* made from connect's cache, not checked with the
	                   engine by this connect */
};

/* A buffered HTTP response (plugin-owned memory). */
struct tb_dk_resp {
	long status;
	char *body;
	size_t len;
};

/* transport.c */
void tb_dk_resp_free(struct tb_dk_resp *r);
/* Negotiates the API version once per instance (retried after failures). */
int tb_dk_negotiate(struct tb_dk *dk, char *errbuf, size_t errlen);
/* Makes an easy handle for dk with URL base/vAPI/path (path starts with
 * '/', already escaped) and the transport options set. */
CURL *tb_dk_handle(struct tb_dk *dk, const char *path, char *errbuf,
                   size_t errlen);
/* One buffered request. body may be NULL (no body); ctype its type. Returns
 * TASKBOX_OK when the engine answered (any status, in r->status). */
int tb_dk_request(struct tb_dk *dk, const char *method, const char *path,
                  const char *ctype, const void *body, size_t body_len,
                  struct tb_dk_resp *r, char *errbuf, size_t errlen);
/* Runs h to completion, calling tick (if not NULL) at least every 100 ms;
 * a nonzero tick aborts with that code. Returns a taskbox status. */
int tb_dk_perform(struct tb_dk *dk, CURL *h, int (*tick)(void *), void *arg,
                  char *errbuf, size_t errlen);
/* Runs n handles at once to completion on one pooled multi handle; rcs[i]
 * gets each transfer's result. Returns TASKBOX_OK when all ran (whatever
 * their results), else a failure of the multi interface or of tick. */
int tb_dk_perform_all(struct tb_dk *dk, CURL **hs, CURLcode *rcs, size_t n,
                      int (*tick)(void *), void *arg, char *errbuf,
                      size_t errlen);
/* Maps a transfer failure to a status and a message naming the engine. */
int tb_dk_curl_error(struct tb_dk *dk, CURL *h, CURLcode rc, char *errbuf,
                     size_t errlen);
/* Maps a non-2xx answer to a status; the message is "what: engine msg". */
int tb_dk_http_error(const struct tb_dk_resp *r, const char *what, char *errbuf,
                     size_t errlen);
/* Formats into errbuf; returns code. */
int tb_dk_fail(int code, char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* URL-escapes s (plugin-owned, free with curl_free). */
char *tb_dk_escape(const char *s);

/* pool.c */
void tb_dk_pool_init(struct tb_dk_pool *p);
void tb_dk_pool_free(struct tb_dk_pool *p);
/* An idle multi handle of dk (made when none is idle), for one thread. */
CURLM *tb_dk_pool_take(struct tb_dk *dk);
/* Returns m, now empty, to dk's pool (or frees it when the pool is full). */
void tb_dk_pool_give(struct tb_dk *dk, CURLM *m);

/* conn_cache.c */
void tb_dk_cache_init(struct tb_dk_cache *k);
void tb_dk_cache_free(struct tb_dk_cache *k);
/* Fills c from a fresh entry for id (checked less than reuse_s ago, its
 * deadline not passed); 1 when found, 0 when connect must check. */
int tb_dk_cache_get(struct tb_dk *dk, const char *id, struct tb_dk_conn *c);
/* Records what a connect that checked the engine learnt (c->deadline
 * included). */
void tb_dk_cache_put(struct tb_dk *dk, const struct tb_dk_conn *c);
/* Moves the entry's deadline (renew), if there is an entry. */
void tb_dk_cache_renewed(struct tb_dk *dk, const char *id, int64_t deadline);
void tb_dk_cache_drop(struct tb_dk *dk, const char *id);
/* Called by an op of c that failed with code. When c came from the cache
 * and code says the sandbox is gone or stopped, connects again through
 * the engine: returns 1 when that worked (c is fresh: make the op again),
 * else 0 with *code and errbuf set to what that connect found (GONE when
 * the sandbox no longer exists). */
int tb_dk_recheck(struct tb_dk_conn *c, int *code, char *errbuf, size_t errlen);

/* containers.c */
int tb_dk_create(void *instance, const struct taskbox_create_req *req, char *id,
                 char *errbuf, size_t errlen);
int tb_dk_connect(void *instance, const char *sandbox_id, void **conn,
                  char *errbuf, size_t errlen);
void tb_dk_close(void *conn);
int tb_dk_destroy(void *instance, const char *sandbox_id, char *errbuf,
                  size_t errlen);
int tb_dk_renew(void *conn, uint32_t lifetime_s, char *errbuf, size_t errlen);
/* A sandbox's state file. */
struct tb_dk_sandbox_state {
	int64_t deadline;
	char *home;
	long uid, gid;
};
int tb_dk_valid_id(const char *id);
/* The checks of connect made with the engine (exists, ours, not expired,
 * running: a stopped one is started), filling c's home and ids. */
int tb_dk_connect_checked(struct tb_dk *dk, const char *id,
                          struct tb_dk_conn *c, char *errbuf, size_t errlen);
/* Forced removal of a container (and its anonymous volumes). */
int tb_dk_remove(struct tb_dk *dk, const char *id, char *errbuf, size_t errlen);

/* lifetime.c */
int tb_dk_write_state(struct tb_dk *dk, const char *id, int64_t deadline,
                      const char *home, long uid, long gid, char *errbuf,
                      size_t errlen);
/* Reads the state file; st->home is malloc'd (NULL on failure). */
int tb_dk_read_state(struct tb_dk *dk, const char *id,
                     struct tb_dk_sandbox_state *st, char *errbuf,
                     size_t errlen);

/* What the engine says of a container now. */
enum tb_dk_state { TB_DK_UNKNOWN, TB_DK_MISSING, TB_DK_RUNNING, TB_DK_STOPPED };
enum tb_dk_state tb_dk_container_state(struct tb_dk *dk, const char *id);
/* Removes every expired taskbox container (best effort, logs failures). */
void tb_dk_sweep(struct tb_dk *dk);

/* owner.c */
/* 1 when s is a valid owner: 1..255 bytes of UTF-8 without control
 * characters. */
int tb_dk_owner_valid(const char *s);
/* Checks an owner for create: 1..255 bytes of UTF-8 without control
 * characters; TASKBOX_E_INVALID naming the rule otherwise. */
int tb_dk_owner_check(const char *owner, char *errbuf, size_t errlen);
/* Copies a principal label into out ("" when absent or not a valid owner,
 * so a damaged label reads as no owner: admins only). */
void tb_dk_owner_from_labels(json_t *labels, char out[TASKBOX_OWNER_MAX]);
/* Unix seconds of an RFC 3339 time ("2026-01-02T03:04:05.6+01:00"), or 0
 * when s is not one. */
int64_t tb_dk_parse_time(const char *s);
/* Fills the fields of info that its struct_size holds. */
void tb_dk_fill_info(struct taskbox_sandbox_info *info, const char *id,
                     const char *owner, int64_t created, int64_t expires);
int tb_dk_describe(void *conn, struct taskbox_sandbox_info *info, char *errbuf,
                   size_t errlen);

/* list.c */
int tb_dk_list(void *instance, const char *owner, taskbox_list_fn each,
               void *arg, char *errbuf, size_t errlen);

/* init.c */
/* Reads the init setting (absent: auto); TASKBOX_E_INVALID if malformed. */
int tb_dk_parse_init(json_t *v, enum tb_dk_init *out);
/* Whether the next container asks for the engine's init. */
int tb_dk_want_init(struct tb_dk *dk);
/* Whether the engine's message says it has no init binary. */
int tb_dk_init_missing(const char *msg);
/* The engine refused a container with init for lack of one (its message
 * in errbuf). Under auto: remembers it, logs it once per instance and
 * returns 1 (make it again without). Under true: rewrites errbuf to name
 * the missing binary and the setting and returns 0. */
int tb_dk_init_refused(struct tb_dk *dk, char *errbuf, size_t errlen);

/* exec.c */
int tb_dk_exec(void *conn, const struct taskbox_exec_req *req,
               struct taskbox_exec_result *res, char *errbuf, size_t errlen);
/* Runs argv as a plain exec with no timeout handling beyond timeout_ms and
 * output kept up to limit; used internally (kill, /proc reads). */
int tb_dk_exec_simple(struct tb_dk_conn *c, const char *const *argv,
                      uint32_t timeout_ms, size_t limit,
                      struct taskbox_exec_result *res, char *errbuf,
                      size_t errlen);

/* batch.c */
int tb_dk_read_files(void *conn, struct taskbox_read_item *const *items,
                     size_t count, char *errbuf, size_t errlen);

/* archive.c */
/* Whether a resolved path is read through exec (procfs). */
int tb_dk_is_proc(const char *full);
/* Reads a procfs file through `cat` (read_file's contract). */
int tb_dk_read_proc(struct tb_dk_conn *c, const char *path, uint64_t offset,
                    size_t length, struct taskbox_buf *data,
                    uint64_t *file_size, char *errbuf, size_t errlen);
int tb_dk_read_file(void *conn, const char *path, uint64_t offset,
                    size_t length, struct taskbox_buf *data,
                    uint64_t *file_size, char *errbuf, size_t errlen);
int tb_dk_write_file(void *conn, const char *path, const unsigned char *data,
                     size_t len, uint32_t mode, char *errbuf, size_t errlen);
/* Reads a whole small file (at most max bytes) through the archive
 * endpoint of container id into plugin-owned memory (free()). */
int tb_dk_read_small(struct tb_dk *dk, const char *id, const char *path,
                     size_t max, char **out, size_t *out_len, char *errbuf,
                     size_t errlen);
/* Writes one file with root ownership at dir/name (dir must exist). */
int tb_dk_put_file(struct tb_dk *dk, const char *id, const char *dir,
                   const char *name, const void *data, size_t len,
                   uint32_t mode, long uid, long gid, char *errbuf,
                   size_t errlen);
/* Resolves path against the connection's home (malloc'd). */
char *tb_dk_resolve(const struct tb_dk_conn *c, const char *path);

/* tar.c: a streaming reader of the first entry and a writer. */
enum tb_tar_kind { TB_TAR_FILE, TB_TAR_DIR, TB_TAR_LINK, TB_TAR_OTHER };
struct tb_tar_reader {
	unsigned char hdr[512];
	size_t hdr_have;
	uint64_t skip; /* bytes of a metadata entry's data (+pad) left */
	char *pax;     /* pax extended header being collected */
	size_t pax_len, pax_want;
	int64_t pax_size; /* size from a pax header, or -1 */
	char link[256];   /* symlink target of the entry */
	char name[260];   /* the entry's name */
	/* Set once the first real entry's header was read: */
	int have_entry;
	enum tb_tar_kind kind;
	uint64_t size;
	uint64_t pos; /* data bytes of the entry consumed so far */
	int bad;      /* malformed archive */
	int ended;    /* bad because of the end-of-archive (zero) block */
};
void tb_tar_reader_init(struct tb_tar_reader *t);
void tb_tar_reader_free(struct tb_tar_reader *t);
/* Moves past the current entry: the next feed reads the next header. */
void tb_tar_next(struct tb_tar_reader *t);
/* Feeds bytes; calls data(arg, pos, bytes, n) for the first entry's data.
 * Returns the bytes consumed; stops at the entry's end (have_entry set and
 * pos == size) or on a malformed header (bad set). */
size_t tb_tar_feed(struct tb_tar_reader *t, const unsigned char *p, size_t n,
                   int (*data)(void *, uint64_t, const unsigned char *, size_t),
                   void *arg);
/* A growable tar being written (plugin-owned). */
struct tb_tar_writer {
	unsigned char *buf;
	size_t len, cap;
};
int tb_tar_add(struct tb_tar_writer *w, const char *name, int is_dir,
               uint32_t mode, long uid, long gid, const void *data, size_t len);
int tb_tar_finish(struct tb_tar_writer *w);

/* fetch.c: one streamed GET of the archive of a path. */
struct tb_dk_fetch {
	struct tb_tar_reader t;
	uint64_t offset, end; /* window of the file's bytes to keep */
	void *(*alloc)(size_t);
	unsigned char *buf;
	size_t len, cap;
	int started, stopped, draining, status_checked;
	long status;
	struct tb_dk_resp err; /* the body of a non-200 answer */
	CURL *h;
};
/* Makes f->h, a GET of the archive of path in container id. The caller set
 * f's window and alloc and zeroed the rest. */
int tb_dk_fetch_begin(struct tb_dk *dk, const char *id, const char *path,
                      struct tb_dk_fetch *f, char *errbuf, size_t errlen);
/* Judges f's transfer (rc its result) and frees f->h: TASKBOX_OK with the
 * first entry in f (a link's target in f->t.link), or a failure naming
 * path. f->buf stays the caller's to free. */
int tb_dk_fetch_end(struct tb_dk *dk, const char *path, struct tb_dk_fetch *f,
                    CURLcode rc, char *errbuf, size_t errlen);
/* The path the link entry of cur's archive points to (malloc'd). */
char *tb_dk_link_next(const char *cur, const char *link);
#define TB_DK_MAX_LINK_HOPS 8

/* dir_fetch.c: several files of one directory in one archive GET. */
struct tb_dk_dir_item {
	const char *name;     /* the file's name in the directory */
	uint64_t offset, end; /* window of its bytes to keep */
	int found, started;   /* its entry was seen; its window begun */
	enum tb_tar_kind kind;
	uint64_t size;
	unsigned char *buf; /* from the dir fetch's alloc */
	size_t len, cap;
	char link[256];
};
struct tb_dk_dir_fetch {
	struct tb_tar_reader t;
	const char *base; /* the directory's last component */
	struct tb_dk_dir_item *items;
	size_t n, seen;
	void *(*alloc)(size_t);
	struct tb_dk_dir_item *cur;
	int entry_open, entries;
	uint64_t streamed, drain_from;
	int draining, complete, nomem, unusable, status_checked;
	long status;
	CURL *h;
};
/* Makes d->h, a GET of the archive of dir; the caller set base, items, n
 * and alloc, and zeroed the rest. */
int tb_dk_dir_begin(struct tb_dk *dk, const char *id, const char *dir,
                    struct tb_dk_dir_fetch *d, char *errbuf, size_t errlen);
/* Judges d's transfer (rc its result) and frees d->h. Returns 1 when the
 * archive was read through, so every item not found does not exist; 0
 * when the items not found must be read one by one. Items' buffers are
 * the caller's either way. */
int tb_dk_dir_end(struct tb_dk_dir_fetch *d, CURLcode rc);

#endif /* TB_DOCKER_H */
