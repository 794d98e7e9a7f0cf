/* The k8s provider's internal declarations: the instance and its settings,
 * the cluster credentials, the REST layer, the WebSocket exec and the
 * channel decoder. */
#ifndef TB_K8S_INT_H
#define TB_K8S_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "taskbox/provider.h"

#define TB_K8S_NAME "k8s"
#define TB_K8S_CONTAINER "main"
#define TB_K8S_MANAGED_BY "app.kubernetes.io/managed-by"
#define TB_K8S_EXPIRES_AT "taskbox.dev/expires-at"
#define TB_K8S_POD_NAME_ANN "agents.x-k8s.io/pod-name"
/* The owner a sandbox was made for, exactly (an annotation), and a hash of
 * it as a label a label selector can match (label values are too narrow
 * for an owner). The apiserver sets both; the pod cannot change them. */
#define TB_K8S_OWNER_ANN "taskbox.dev/owner"
#define TB_K8S_OWNER_LABEL "taskbox.dev/owner-hash"
/* Objects per page of list's LIST requests (limit=, then continue=). */
#define TB_K8S_LIST_LIMIT 250
/* The first line the exec wrapper writes on stderr: its pid. */
#define TB_K8S_PID_MARKER "taskbox-exec-pid "

enum tb_k8s_kind { TB_K8S_POD = 0, TB_K8S_SANDBOX = 1 };

/* Where the apiserver is and how to prove who we are: from a kubeconfig
 * context or from the in-cluster service account. Blobs are PEM. */
struct tb_k8s_cluster {
	char *server; /* scheme://host[:port][/prefix], no trailing '/' */
	char *ca_file;
	char *ca_data;
	size_t ca_len;
	char *cert_file;
	char *cert_data;
	size_t cert_len;
	char *key_file;
	char *key_data;
	size_t key_len;
	char *token_file; /* re-read on a 401 */
	int insecure;     /* insecure-skip-tls-verify */
	char *proxy;      /* proxy-url */
	char *namespace;  /* the context's, or the service account's */
	pthread_mutex_t token_lock;
	char *token; /* guarded by token_lock */
};

/* One entry of settings.templates. JSON members are kept as JSON. */
struct tb_k8s_template {
	char *name;
	char *image;
	json_t *resources;     /* or NULL */
	json_t *node_selector; /* or NULL */
	json_t *labels;        /* or NULL */
	json_t *tolerations;   /* or NULL */
	char *runtime_class;   /* or NULL */
	char *service_account; /* or NULL */
	int automount_token;
};

struct tb_k8s_cache;

/* A provider instance: immutable after init except where locks say. */
struct tb_k8s {
	const struct taskbox_host *host;
	struct tb_k8s_cluster cl;
	char *namespace;
	enum tb_k8s_kind kind;
	char *workdir; /* the sandboxes' home, absolute */
	json_t *env;   /* the container's env: [{name, value}] */
	struct tb_k8s_template *templates;
	size_t ntemplates;
	size_t default_template;
	uint32_t default_lifetime_s;
	uint32_t max_lifetime_s;
	uint32_t ready_timeout_s;
	uint32_t request_timeout_s;
	uint32_t reap_interval_s; /* 0: no reaper thread */
	uint32_t connection_reuse_s;
	struct tb_k8s_cache *cache;

	/* max_concurrent_execs: a counting gate (0 = unlimited). */
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	uint32_t exec_limit;
	uint32_t execs_running;

	/* Idle REST handles, kept for their connections. */
	pthread_mutex_t pool_lock;
	CURL *pool[8];
	size_t npool;

	/* The expired-pod reaper. */
	pthread_t reaper;
	int reaper_started;
	pthread_mutex_t reaper_lock;
	pthread_cond_t reaper_cond;
	int stopping;
};

/* A connection: one sandbox, as connect found it. */
struct tb_k8s_conn {
	struct tb_k8s *inst;
	char id[TASKBOX_SANDBOX_ID_MAX];
	char name[64];  /* the object's name (Pod or Sandbox) */
	char uid[64];   /* the object's UID */
	char pod[254];  /* the pod that runs the commands */
	time_t created; /* creation, for the lifetime cap */
	time_t expires; /* the expires-at annotation; 0 when unknown */
	char owner[TASKBOX_OWNER_MAX]; /* the owner annotation, "" for none */
	int from_cache;                /* connect answered from the cache */
};

/* ---- errors (errors.c) ---- */

/* Writes a one-line message into errbuf (at most errlen bytes); returns
 * code. */
int tb_k8s_fail(char *errbuf, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The ABI code for an apiserver HTTP status. */
int tb_k8s_http_code(long status);

/* Copies the Status "message" of an error body (or its first line) into
 * out. */
void tb_k8s_status_message(const char *body, size_t len, char *out,
                           size_t outlen);

/* ---- settings and credentials (settings.c, kubeconfig.c) ---- */

/* Parses settings_json into inst (also reading the kubeconfig or the
 * service account). */
int tb_k8s_settings(struct tb_k8s *inst, const char *settings_json,
                    char *errbuf, size_t errlen);
void tb_k8s_settings_free(struct tb_k8s *inst);

/* Fills cl from the kubeconfig file at path, for context (NULL: its
 * current-context). */
int tb_k8s_kubeconfig_load(const char *path, const char *context,
                           struct tb_k8s_cluster *cl, char *errbuf,
                           size_t errlen);
/* Fills cl from the pod's service account and KUBERNETES_SERVICE_*. dir
 * NULL means /var/run/secrets/kubernetes.io/serviceaccount. */
int tb_k8s_incluster_load(const char *dir, struct tb_k8s_cluster *cl,
                          char *errbuf, size_t errlen);
void tb_k8s_cluster_free(struct tb_k8s_cluster *cl);
/* Re-reads the token file (after a 401); 1 when the token changed. */
int tb_k8s_token_reload(struct tb_k8s_cluster *cl);
/* "Authorization: Bearer ..." into out (empty when there is no token). */
void tb_k8s_auth_header(struct tb_k8s_cluster *cl, char *out, size_t outlen);

/* Decodes standard base64 (whitespace ignored) into a malloc'd buffer. */
int tb_k8s_base64_decode(const char *s, char **out, size_t *outlen);

/* ---- REST (rest.c) ---- */

struct tb_k8s_resp {
	long status;
	char *body; /* malloc'd, NUL-terminated */
	size_t len;
};

/* Applies the cluster's TLS, client certificate and proxy to easy. */
int tb_k8s_curl_setup(struct tb_k8s *inst, CURL *easy);

/* Runs one request to the apiserver: path starts with '/', body is JSON
 * (or NULL) sent with content_type. Retries a 401 once after re-reading
 * the token and a 429 a bounded number of times. TASKBOX_OK means an
 * answer arrived (read resp->status). */
int tb_k8s_rest(struct tb_k8s *inst, const char *method, const char *path,
                const char *body, const char *content_type,
                struct tb_k8s_resp *resp, char *errbuf, size_t errlen);
void tb_k8s_resp_free(struct tb_k8s_resp *resp);
/* Maps a non-2xx answer to an ABI code with "what: HTTP n: message". */
int tb_k8s_rest_fail(const struct tb_k8s_resp *resp, const char *what,
                     char *errbuf, size_t errlen);
void tb_k8s_pool_free(struct tb_k8s *inst);

/* ---- objects (objects.c, pods.c) ---- */

/* The Pod (or Sandbox) object for a new sandbox, as JSON; owner NULL or ""
 * for none, else recorded on the object (not on a Sandbox's pod). */
json_t *tb_k8s_object_new(const struct tb_k8s *inst,
                          const struct tb_k8s_template *t, const char *name,
                          const char *hexid, time_t expires_at,
                          const char *owner);

/* 1 when owner is 1..255 bytes of UTF-8 without control characters. */
int tb_k8s_owner_valid(const char *owner);
/* The owner's label value: 64-bit FNV-1a as 16 hex digits (out >= 17). */
void tb_k8s_owner_hash(const char *owner, char *out);
/* What an object records of its sandbox: its owner annotation (""
 * when none; -1 when it is not a valid owner), creation and expiry (0
 * when unknown). */
int tb_k8s_object_meta(json_t *obj, char *owner, size_t ownerlen,
                       time_t *created, time_t *expires);
/* "/api/v1/namespaces/NS/pods" or the sandboxes' collection, plus "/name"
 * when name is not NULL; into out. */
void tb_k8s_object_path(const struct tb_k8s *inst, enum tb_k8s_kind kind,
                        const char *name, char *out, size_t outlen);

/* What a Pod's status says about starting: 1 ready, 0 not yet, or an ABI
 * code (< 0 as -code) with reason written into why. */
int tb_k8s_pod_readiness(json_t *pod, char *why, size_t whylen);
/* What a Sandbox's status says: as tb_k8s_pod_readiness. */
int tb_k8s_sandbox_readiness(json_t *sb, char *why, size_t whylen);

/* RFC 3339 (UTC, "Z") from and to time_t; parse returns -1 on bad text. */
void tb_k8s_rfc3339(time_t t, char *out, size_t outlen);
time_t tb_k8s_parse_rfc3339(const char *s);

/* Sandbox ids: "NAME.UID". split returns 0 when id has that shape. */
int tb_k8s_split_id(const char *id, char *name, size_t namelen, char *uid,
                    size_t uidlen);

int tb_k8s_create(struct tb_k8s *inst, const struct tb_k8s_template *t,
                  uint32_t lifetime_s, const char *owner, char *id,
                  char *errbuf, size_t errlen);
int tb_k8s_connect_conn(struct tb_k8s *inst, const char *id,
                        struct tb_k8s_conn *c, char *errbuf, size_t errlen);
int tb_k8s_destroy(struct tb_k8s *inst, const char *id, char *errbuf,
                   size_t errlen);
int tb_k8s_renew(struct tb_k8s_conn *c, uint32_t lifetime_s, char *errbuf,
                 size_t errlen);
/* After an exec failed to start: asks the apiserver whether c's sandbox
 * still exists as connect found it, turning rc into TASKBOX_E_GONE with
 * a message when it does not. */
int tb_k8s_check_gone(struct tb_k8s_conn *c, int rc, char *errbuf,
                      size_t errlen);

/* ---- ownership (list.c) ---- */

/* describe: what connect learnt of c's sandbox; no request. */
int tb_k8s_describe(struct tb_k8s_conn *c, struct taskbox_sandbox_info *info,
                    char *errbuf, size_t errlen);
/* list: every live sandbox of the instance's kind (of owner, when not
 * NULL), page by page. Thread-safe. */
int tb_k8s_list(struct tb_k8s *inst, const char *owner, taskbox_list_fn each,
                void *arg, char *errbuf, size_t errlen);
/* At init with kind sandbox: one LIST of a single Sandbox, so that a
 * cluster without agent-sandbox or a Role without list shows at once. */
int tb_k8s_list_probe(struct tb_k8s *inst, char *errbuf, size_t errlen);

/* ---- the connect cache (cache.c) ---- */

struct tb_k8s_cache *tb_k8s_cache_new(uint32_t ttl_s);
void tb_k8s_cache_free(struct tb_k8s_cache *cache);
/* 1 and c filled from a fresh entry, else 0. Thread-safe. */
int tb_k8s_cache_get(struct tb_k8s_cache *cache, const char *id,
                     struct tb_k8s_conn *c);
void tb_k8s_cache_put(struct tb_k8s_cache *cache, const struct tb_k8s_conn *c);
void tb_k8s_cache_drop(struct tb_k8s_cache *cache, const char *id);

/* ---- the expired-pod reaper (reaper.c) ---- */

/* Deletes the pods of this namespace whose expires-at passed. Returns an
 * ABI code (OK when the list worked). */
int tb_k8s_reap_once(struct tb_k8s *inst, char *errbuf, size_t errlen);
int tb_k8s_reaper_start(struct tb_k8s *inst);
void tb_k8s_reaper_stop(struct tb_k8s *inst);

/* ---- channel decoding (channels.c): pure, fuzzed ---- */

enum tb_k8s_status_kind {
	TB_K8S_ST_NONE = 0,   /* no Status came */
	TB_K8S_ST_EXIT = 1,   /* an exit code */
	TB_K8S_ST_NOEXIT = 2, /* a Failure without an exit code */
	TB_K8S_ST_BAD = 3     /* channel 3 held no Status */
};

struct tb_k8s_chan {
	const struct taskbox_host *host;
	struct taskbox_exec_result *res; /* out, err and truncation */
	size_t output_limit;             /* per stream; 0 = none */
	size_t cap[2];
	int want_marker; /* the first stderr line may be the pid marker */
	char marker[48]; /* the pending start of stderr */
	size_t marker_len;
	long pid;     /* from the marker; 0 when none */
	char *status; /* channel 3's bytes, NUL-terminated */
	size_t status_len;
	int fail; /* an ABI code once decoding failed (no memory) */
};

void tb_k8s_chan_init(struct tb_k8s_chan *ch, const struct taskbox_host *host,
                      struct taskbox_exec_result *res, size_t output_limit,
                      int want_marker);
/* Feeds one whole WebSocket data message (channel byte first). Returns 0
 * or the ABI code of a fault (also kept in fail). */
int tb_k8s_chan_feed(struct tb_k8s_chan *ch, const unsigned char *msg,
                     size_t len);
/* Flushes a pending marker prefix into stderr (the stream ended). */
int tb_k8s_chan_finish(struct tb_k8s_chan *ch);
/* Reads channel 3: its kind, the exit code (for ST_EXIT) and the Status
 * message (for ST_NOEXIT and ST_BAD). */
enum tb_k8s_status_kind tb_k8s_chan_status(const struct tb_k8s_chan *ch,
                                           int *exit_code, char *msg,
                                           size_t msglen);
void tb_k8s_chan_free(struct tb_k8s_chan *ch);

/* ---- WebSocket exec (ws.c, wsaccept.c) ---- */

/* Sec-WebSocket-Accept for key, into out (at least 29 bytes). */
void tb_k8s_ws_accept(const char *key, char *out);
/* A Sec-WebSocket-Key from 16 random bytes, into out (at least 25). */
void tb_k8s_ws_key(const unsigned char *nonce16, char *out);

/* Polled at least every 100 ms while an exec runs: 0 to go on, or an ABI
 * code to abandon the stream with. */
typedef int (*tb_k8s_tick_fn)(void *ctx);

struct tb_k8s_exec_io {
	const unsigned char *stdin_data; /* NULL: no stdin requested */
	size_t stdin_len;
	struct tb_k8s_chan *chan;
	tb_k8s_tick_fn tick;
	void *tick_ctx;
	uint64_t deadline_ms; /* monotonic; 0: none (tick decides) */
};

/* Runs argv in c's pod over one WebSocket exec and reads to the close
 * frame. TASKBOX_OK: the stream ended cleanly (read the Status through
 * io->chan). Else an ABI code: the command may or may not have run. */
int tb_k8s_ws_exec(struct tb_k8s_conn *c, const char *const *argv,
                   struct tb_k8s_exec_io *io, char *errbuf, size_t errlen);

uint64_t tb_k8s_now_ms(void);

/* ---- the ops on a connection (exec.c, files.c) ---- */

int tb_k8s_exec(struct tb_k8s_conn *c, const struct taskbox_exec_req *req,
                struct taskbox_exec_result *res, char *errbuf, size_t errlen);
/* Runs a plugin-made argv (no wrapper) with a deadline; res in host
 * memory. */
int tb_k8s_exec_plain(struct tb_k8s_conn *c, const char *const *argv,
                      const unsigned char *stdin_data, size_t stdin_len,
                      uint32_t timeout_ms, size_t output_limit,
                      struct taskbox_exec_result *res, char *errbuf,
                      size_t errlen);
int tb_k8s_read_file(struct tb_k8s_conn *c, const char *path, uint64_t offset,
                     size_t length, struct taskbox_buf *data,
                     uint64_t *file_size, char *errbuf, size_t errlen);
int tb_k8s_write_file(struct tb_k8s_conn *c, const char *path,
                      const unsigned char *data, size_t len, uint32_t mode,
                      char *errbuf, size_t errlen);
/* ---- long arguments through files (argfiles.c) ---- */

#define TB_K8S_SPILL_MIN 2048
#define TB_K8S_SPILL_MAX 8
#define TB_K8S_SPILL_MISSING_EXIT 96

struct tb_k8s_argfile {
	char path[600];
	const char *text; /* borrowed: the original argument */
	size_t len;
	char *ref; /* what now stands in argv */
};

struct tb_k8s_spilled {
	struct tb_k8s_argfile files[TB_K8S_SPILL_MAX];
	size_t count;
};

/* The sh text that puts spilled arguments back, before a wrapper. */
extern const char tb_k8s_spill_prelude[];
/* Replaces each long argument of argv (from the first) by a file
 * reference; 0, or -1 on no memory. */
int tb_k8s_spill(const struct tb_k8s_conn *c, const char **argv,
                 struct tb_k8s_spilled *sp);
/* Writes the spilled arguments' files in the pod. */
int tb_k8s_spill_upload(struct tb_k8s_conn *c, const struct tb_k8s_spilled *sp,
                        char *errbuf, size_t errlen);
void tb_k8s_spill_free(struct tb_k8s_spilled *sp);

/* read_files: every regular file in one exec (batch.c). */
int tb_k8s_read_files(struct tb_k8s_conn *c,
                      struct taskbox_read_item *const *items, size_t count,
                      char *errbuf, size_t errlen);
/* path against the home; malloc'd. */
char *tb_k8s_resolve(const struct tb_k8s_conn *c, const char *path);

#endif /* TB_K8S_INT_H */
