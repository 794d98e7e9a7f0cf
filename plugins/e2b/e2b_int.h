/* The e2b provider's internal declarations: the instance, the connection,
 * the HTTP layer shared by the control plane and envd, Connect framing. */
#ifndef TB_E2B_INT_H
#define TB_E2B_INT_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "taskbox/provider.h"

#define TB_E2B_NAME "e2b"
#define TB_E2B_ENVD_PORT 49983

struct tb_http_pool;
struct tb_conn_cache;

/* The sandbox metadata keys taskbox sets at create (ABI 1.5): the tag that
 * marks a sandbox as taskbox's, and the owner when there is one. */
#define TB_E2B_META_TAG "taskbox"
#define TB_E2B_META_TAG_VALUE "1"
#define TB_E2B_META_OWNER "taskbox_owner"

/* What describe answers for a sandbox: known is 0 until the API said. */
struct tb_e2b_info {
	int known;
	char owner[TASKBOX_OWNER_MAX]; /* "" when none was recorded */
	int64_t created_s;
	int64_t expires_s; /* 0 when not known (a paused sandbox) */
};

/* A provider instance: validated settings and the API key read from the
 * environment variable they name. Immutable after init, but for what the
 * pool and the cache hold (each behind its own lock). */
struct tb_e2b {
	const struct taskbox_host *host;
	char *api_key_env;
	char *api_key;     /* NULL when the variable is unset or empty */
	char *api_url;     /* no trailing '/' */
	char *sandbox_url; /* NULL unless set; no trailing '/' */
	char *domain;
	char *template_name;
	char *
	    env_json; /* JSON object NAME -> value for every sandbox, or NULL */
	uint32_t default_lifetime_s;
	uint32_t request_timeout_s;
	uint32_t connection_reuse_s; /* 0: every connect asks the API */
	struct tb_http_pool *pool;   /* idle HTTP connections */
	struct tb_conn_cache *cache; /* what connect learnt, per sandbox */
};

/* A connection to one sandbox's envd. */
struct tb_e2b_conn {
	struct tb_e2b *inst;
	char id[TASKBOX_SANDBOX_ID_MAX];
	char *envd_url;     /* no trailing '/' */
	char *access_token; /* NULL when the sandbox has none */
	int legacy_user;    /* envd < 0.4.0: the user must be named */
	int octet_upload;   /* envd >= 0.5.7: raw uploads */
	int stale; /* envd said the sandbox or the token is not as connect
	              found them (see tb_envd_fail) */
	struct tb_e2b_info info; /* for describe, once known */
};

/* ---- errors (errors.c) ---- */

/* Writes a one-line message into errbuf (never more than errlen bytes),
 * with every occurrence of the secrets replaced by "****"; returns code. */
int tb_e2b_fail(char *errbuf, size_t errlen, const char *secret1,
                const char *secret2, int code, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* The ABI code for an HTTP status; envd_plane tells envd's proxy (502:
 * the sandbox is gone) from the control plane. */
int tb_e2b_http_code(long status, int envd_plane);

/* The ABI code for a Connect error code name. */
int tb_e2b_connect_code(const char *name);

/* Copies the service's message out of an error body (JSON "message", or
 * the first line of text) into out, at most outlen bytes. */
void tb_e2b_service_message(const char *body, size_t len, char *out,
                            size_t outlen);

/* ---- HTTP (http.c) ---- */

struct tb_http_resp {
	long status;
	char *body; /* malloc'd, NUL-terminated; the non-streamed body */
	size_t len;
	long long content_length; /* -1 when not sent */
	char content_range[96];
	char retry_after[64];
	char next_token[512]; /* X-Next-Token of a list page, or "" */
};

/* Receives a 2xx body as it arrives. Returns 0 to go on, -1 to stop the
 * transfer early (success), or an ABI code to fail with. */
typedef int (*tb_http_sink)(void *ctx, const unsigned char *data, size_t n);

/* Called at least every 100 ms while the request runs. Returns 0 to go on
 * or an ABI code to abandon the request with. */
typedef int (*tb_http_tick)(void *ctx);

struct tb_http_req {
	const char *method;
	const char *url;
	struct curl_slist *headers;
	const void *body; /* NULL for none */
	size_t body_len;
	curl_mime *mime;     /* instead of body; needs the easy handle */
	CURL *easy;          /* for mime: the handle mime was made with */
	uint32_t timeout_ms; /* whole request; 0 = only tick bounds it */
	tb_http_sink sink;   /* NULL: a 2xx body is collected as well */
	tb_http_tick tick;
	void *ctx;
	int retry_429; /* retry where the service says when (Retry-After) */
};

/* Runs a request to completion, retrying a 429 that names a Retry-After a
 * bounded number of times. TASKBOX_OK means a response arrived (any status:
 * read resp->status). The message names no secret of inst. */
int tb_http_run(struct tb_e2b *inst, const struct tb_http_req *req,
                struct tb_http_resp *resp, char *errbuf, size_t errlen);

void tb_http_resp_free(struct tb_http_resp *resp);

/* Appends "Name: value" to *list; returns 0 or -1 on no memory. */
int tb_http_header(struct curl_slist **list, const char *name,
                   const char *value);

/* Runs n requests at once on one multi handle (HTTP/2 streams of one
 * connection where the server speaks it, else parallel connections); no 429
 * retries, no ticks. Returns OK when every request ran to an end, each with
 * its own code in rcs[i] (OK: a response arrived); errbuf then holds the
 * message of the first failed one, *failed_at its index. Another code means
 * the batch could not be set up. */
int tb_http_run_batch(struct tb_e2b *inst,
                      const struct tb_http_req *const *reqs,
                      struct tb_http_resp *const *resps, int *rcs, size_t n,
                      size_t *failed_at, char *errbuf, size_t errlen);

/* Maps a non-2xx response to an ABI code and writes "what: HTTP n: the
 * service's message" into errbuf. */
int tb_http_fail(struct tb_e2b *inst, const char *secret2,
                 const struct tb_http_resp *resp, int envd_plane,
                 const char *what, char *errbuf, size_t errlen);

/* ---- the pool of idle HTTP connections (http_pool.c) ---- */

struct tb_http_pool *tb_http_pool_new(void);
void tb_http_pool_free(struct tb_http_pool *pool);
/* A multi handle for the calling thread alone (with the connections the
 * last user left open), or NULL on no memory. Thread-safe. */
CURLM *tb_http_pool_take(struct tb_http_pool *pool);
/* Gives a multi handle with no transfer in it back. Thread-safe. */
void tb_http_pool_give(struct tb_http_pool *pool, CURLM *multi);

/* ---- what connect learnt, kept per sandbox (conn_cache.c) ---- */

struct tb_conn_cache *tb_conn_cache_new(uint32_t ttl_s);
void tb_conn_cache_free(struct tb_conn_cache *cache);
/* Fills conn's envd fields from a fresh entry for id: 1 when found, 0
 * when there is none (or it is older than the ttl), -1 on no memory.
 * Thread-safe, as are put and drop. */
int tb_conn_cache_get(struct tb_conn_cache *cache, const char *id,
                      struct tb_e2b_conn *conn);
/* Keeps a copy of conn's envd fields for conn->id for ttl seconds from
 * now (quietly nothing on no memory). */
void tb_conn_cache_put(struct tb_conn_cache *cache,
                       const struct tb_e2b_conn *conn);
void tb_conn_cache_drop(struct tb_conn_cache *cache, const char *id);
/* Sets what describe learnt on id's entry, if there is one (its age is
 * kept). */
void tb_conn_cache_set_info(struct tb_conn_cache *cache, const char *id,
                            const struct tb_e2b_info *info);

/* ---- connecting, with the cache (reconnect.c) ---- */

/* connect: from a fresh cache entry, else through the API (and kept). */
int tb_e2b_conn_open(struct tb_e2b *inst, const char *id,
                     struct tb_e2b_conn *conn, char *errbuf, size_t errlen);
/* After an envd op on conn returned *rc: when envd said the connection is
 * stale (conn->stale), the cache is on and this was the op's first try
 * (*tries == 0), drops the entry, connects again through the API (which
 * resumes a paused sandbox) and returns 1: run the op once more. Otherwise
 * returns 0 with *rc and errbuf final (a sandbox the API no longer knows is
 * GONE). */
int tb_e2b_retry_stale(struct tb_e2b_conn *conn, int *rc, int *tries,
                       char *errbuf, size_t errlen);

/* ---- control plane (api.c) ---- */

/* POST /v2/sandboxes, tagged as taskbox's, with owner (NULL or "" for
 * none) in the metadata. */
int tb_e2b_api_create(struct tb_e2b *inst, const char *template_name,
                      uint32_t lifetime_s, const char *owner, char *id,
                      char *errbuf, size_t errlen);
int tb_e2b_api_connect(struct tb_e2b *inst, const char *id,
                       struct tb_e2b_conn *conn, char *errbuf, size_t errlen);
int tb_e2b_api_destroy(struct tb_e2b *inst, const char *id, char *errbuf,
                       size_t errlen);
int tb_e2b_api_renew(struct tb_e2b *inst, const char *id, uint32_t lifetime_s,
                     char *errbuf, size_t errlen);
/* GET /sandboxes/{id}: what describe answers. */
int tb_e2b_api_info(struct tb_e2b *inst, const char *id,
                    struct tb_e2b_info *info, char *errbuf, size_t errlen);
/* Runs one control-plane call (a JSON body or none; 429 retried). */
int tb_e2b_api_call(struct tb_e2b *inst, const char *method, const char *path,
                    json_t *body, const char *what, struct tb_http_resp *resp,
                    char *errbuf, size_t errlen);

/* ---- ownership (owner.c, list.c) ---- */

/* Nonzero for an owner the ABI allows: 1..255 bytes of UTF-8 without
 * control characters. */
int tb_e2b_valid_owner(const char *owner);
/* Parses an RFC 3339 date-time ("2026-01-02T03:04:05.678Z", or with an
 * offset) into Unix seconds; 0 or -1 when malformed. */
int tb_e2b_parse_time(const char *s, int64_t *out);
/* Fills info from a sandbox object of the API (SandboxDetail or
 * ListedSandbox). Returns 1 when it is taskbox's (tagged, with a valid
 * sandboxID and owner), else 0. */
int tb_e2b_info_from_json(json_t *sbx, char *id, struct tb_e2b_info *info);
/* Copies id and info into out, no field past out->struct_size. */
void tb_e2b_info_out(const char *id, const struct tb_e2b_info *info,
                     struct taskbox_sandbox_info *out);
/* The value of the list API's metadata parameter, already escaped for the
 * query string (as the SDK sends it): the tag, and owner when not NULL nor
 * "". malloc'd, or NULL on no memory. */
char *tb_e2b_metadata_query(const char *owner);
/* s percent-encoded but for RFC 3986's unreserved characters; malloc'd,
 * or NULL on no memory. */
char *tb_e2b_pct(const char *s);
/* The list op: every taskbox sandbox of the API key's team, or owner's. */
int tb_e2b_list(struct tb_e2b *inst, const char *owner, taskbox_list_fn each,
                void *arg, char *errbuf, size_t errlen);

/* ---- envd (envd_common.c, envd_process.c, envd_files.c) ---- */

/* The headers every envd request carries (access token, routing, user
 * agent, the user for an old envd). */
int tb_envd_headers(const struct tb_e2b_conn *conn, struct curl_slist **list);

/* "envd_url" + path; malloc'd or NULL. */
char *tb_envd_url(const struct tb_e2b_conn *conn, const char *path);

int tb_envd_exec(struct tb_e2b_conn *conn, const struct taskbox_exec_req *req,
                 struct taskbox_exec_result *res, char *errbuf, size_t errlen);
int tb_envd_read_file(struct tb_e2b_conn *conn, const char *path,
                      uint64_t offset, size_t length, struct taskbox_buf *data,
                      uint64_t *file_size, char *errbuf, size_t errlen);
int tb_envd_write_file(struct tb_e2b_conn *conn, const char *path,
                       const unsigned char *data, size_t len, uint32_t mode,
                       char *errbuf, size_t errlen);

/* Like tb_http_fail for an envd answer, and marks conn stale when the
 * answer says the sandbox is not reachable as connect found it: 502 from
 * the sandbox proxy (killed, expired or paused) or 401 from envd (the
 * access token was rejected). */
int tb_envd_fail(struct tb_e2b_conn *conn, const struct tb_http_resp *resp,
                 const char *what, char *errbuf, size_t errlen);

/* One GET /files read, split so that many can run at once: begin makes
 * the request (req), end turns its response into data and file_size the
 * way read_file does. */
struct tb_file_read {
	struct tb_e2b_conn *conn;
	const char *path;
	struct tb_http_req req;
	struct tb_http_resp resp;
	struct curl_slist *headers;
	char *url;
	struct taskbox_buf *data;
	uint64_t *file_size;
	size_t cap;
	uint64_t skip; /* bytes still to drop (a 200 from offset 0) */
	size_t want;   /* bytes still to keep */
	uint64_t seen; /* body bytes seen */
};

/* Nonzero for the paths read_file serves with cat (procfs, sysfs). */
int tb_envd_is_procfs(const char *path);
/* Checks the arguments and prepares fr; *data and *file_size are reset. */
int tb_envd_read_begin(struct tb_e2b_conn *conn, const char *path,
                       uint64_t offset, size_t length, struct taskbox_buf *data,
                       uint64_t *file_size, struct tb_file_read *fr,
                       char *errbuf, size_t errlen);
/* Given the code the request ran with, the read's result; on failure no
 * data is left behind. */
int tb_envd_read_end(struct tb_file_read *fr, int rc, char *errbuf,
                     size_t errlen);
void tb_envd_read_free(struct tb_file_read *fr);
/* read_file for the procfs and sysfs paths: one exec of cat. */
int tb_envd_read_procfs(struct tb_e2b_conn *conn, const char *path,
                        uint64_t offset, size_t length,
                        struct taskbox_buf *data, uint64_t *file_size,
                        char *errbuf, size_t errlen);
/* read_files: the GET /files reads all at once (envd_batch.c). */
int tb_envd_read_files(struct tb_e2b_conn *conn,
                       struct taskbox_read_item *const *items, size_t count,
                       char *errbuf, size_t errlen);

/* ---- Connect framing (connect_frame.c) ---- */

#define TB_FRAME_COMPRESSED 0x01u
#define TB_FRAME_END_STREAM 0x02u

/* Called for each whole envelope; returns 0 or an ABI code to stop. */
typedef int (*tb_frame_fn)(void *ctx, unsigned flags, const unsigned char *data,
                           size_t len);

struct tb_frame_reader {
	unsigned char head[5];
	size_t head_len;
	unsigned char *payload;
	size_t payload_len; /* announced length */
	size_t have;
	size_t max_payload;
};

void tb_frame_reader_init(struct tb_frame_reader *r, size_t max_payload);
void tb_frame_reader_free(struct tb_frame_reader *r);
/* Feeds stream bytes; calls fn for every completed envelope. Returns 0,
 * TASKBOX_E_PROTOCOL (oversized frame), TASKBOX_E_NOMEM or fn's code. */
int tb_frame_feed(struct tb_frame_reader *r, const unsigned char *p, size_t n,
                  tb_frame_fn fn, void *ctx);
/* Nonzero when bytes of an unfinished envelope are pending. */
int tb_frame_pending(const struct tb_frame_reader *r);
/* One envelope around len bytes: malloc'd into *out. 0 or -1. */
int tb_frame_encode(unsigned flags, const void *data, size_t len,
                    unsigned char **out, size_t *outlen);

/* ---- Process.Start's answer (process_stream.c) ---- */

struct tb_pstream {
	const struct taskbox_host *host;
	struct taskbox_exec_result *res; /* out, err, truncation, exit_code */
	size_t output_limit;             /* per stream; 0 = none */
	struct tb_frame_reader reader;
	size_t cap[2];
	unsigned long pid; /* from the start event; 0 until then */
	int ended;         /* the end event came (exit_code is set) */
	int stream_done;   /* the end-of-stream envelope came */
	int stream_error;  /* ... and it carried an error: */
	char end_code[32]; /* its Connect code */
	char end_msg[300]; /* and message */
	int fail;          /* an ABI code once the stream is bad */
};

/* Prepares to decode into res (exit_code starts at -1). */
void tb_pstream_init(struct tb_pstream *ps, const struct taskbox_host *host,
                     struct taskbox_exec_result *res, size_t output_limit);
/* Feeds answer bytes as they come. Returns 0 or the ABI code of the
 * first fault (TASKBOX_E_PROTOCOL, TASKBOX_E_NOMEM), also kept in fail. */
int tb_pstream_feed(struct tb_pstream *ps, const unsigned char *p, size_t n);
/* Nonzero when the end event and the end of stream came, nothing torn. */
int tb_pstream_complete(const struct tb_pstream *ps);
void tb_pstream_free(struct tb_pstream *ps);

/* Decodes standard or URL-safe base64 (padding optional) and passes the
 * bytes to put in pieces. Returns 0, or -1 on a bad character. */
int tb_base64_decode(const char *s, size_t n,
                     void (*put)(void *ctx, const unsigned char *p, size_t n),
                     void *ctx);

/* The sandbox id charset rule of the ABI. */
int tb_e2b_valid_id(const char *id);

/* Compares dotted versions "a.b.c"; <0, 0, >0. */
int tb_e2b_version_cmp(const char *a, const char *b);

#endif /* TB_E2B_INT_H */
