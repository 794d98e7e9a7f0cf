/* The frozen ABI 1.4 header: include/taskbox/provider.h as it was before
 * ABI 1.5, kept unchanged for tests/unit/test_abi_compat.c (a plugin built
 * against it must still load). Never edit it. */
/* taskbox provider plugin ABI.
 *
 * This is the only public header of taskbox. A provider plugin is a loadable
 * module that exports exactly one symbol, TASKBOX_PROVIDER_ENTRY_NAME, a
 * function returning a constant descriptor (struct taskbox_provider).
 *
 * Evolution rules (append only):
 *   - TASKBOX_ABI_MAJOR changes only when an existing declaration changes
 *     meaning; the entry symbol's name carries it, so a plugin built for
 *     another major is not even found.
 *   - TASKBOX_ABI_MINOR grows when fields are appended to a struct or codes
 *     to enum taskbox_status. The host rejects a plugin whose minor is newer
 *     than its own; a plugin built for an older minor works, and every field
 *     past the struct_size it reports is treated as absent.
 *   - Request structs passed to a plugin carry the host's struct_size; a
 *     plugin reads no field past it.
 *
 * Memory: every input is borrowed for the duration of the call only. Every
 * buffer handed back to the host is allocated with the host's allocator
 * (struct taskbox_host) and freed by the host; never free() across the
 * boundary. Error paths allocate nothing: a failing op writes a one-line,
 * NUL-terminated message into the caller-owned errbuf (errlen bytes,
 * truncating) and returns a code from enum taskbox_status.
 *
 * Threads: not thread-safe except where stated. init and fini run once per
 * provider instance with no other op in flight. create, connect and destroy
 * may be called concurrently on one instance. A connection is used by one
 * thread at a time; distinct connections may be used concurrently.
 *
 * JSON crosses the boundary as text, never as library objects.
 *
 * Compiles as C99, C11 and C++.
 */
#ifndef TASKBOX_PROVIDER_H
#define TASKBOX_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TASKBOX_ABI_MAJOR 1
#define TASKBOX_ABI_MINOR 4

/* The one exported symbol of a plugin, carrying the ABI major. */
#define TASKBOX_PROVIDER_ENTRY taskbox_provider_entry_v1
#define TASKBOX_PROVIDER_ENTRY_NAME "taskbox_provider_entry_v1"

/* Size of a buffer that holds any sandbox id, including its NUL. A sandbox
 * id produced by a plugin is 1..127 bytes of [A-Za-z0-9_.-]. */
#define TASKBOX_SANDBOX_ID_MAX 128

/* Suggested size of an errbuf; plugins must accept any errlen >= 1. */
#define TASKBOX_ERRBUF_SIZE 512

/* Status codes returned by every op. Append only: a code is never removed or
 * renumbered; a retired one keeps its number. */
enum taskbox_status {
	TASKBOX_OK = 0,
	/* An argument or a setting breaks a rule. */
	TASKBOX_E_INVALID = 1,
	/* Out of memory. */
	TASKBOX_E_NOMEM = 2,
	/* The named sandbox, file or image does not exist. */
	TASKBOX_E_NOT_FOUND = 3,
	/* The sandbox existed but was destroyed, expired or removed behind
	 * our back. */
	TASKBOX_E_GONE = 4,
	/* The backend cannot be reached or is down. */
	TASKBOX_E_UNAVAILABLE = 5,
	/* The backend refused access. */
	TASKBOX_E_PERMISSION = 6,
	/* Credentials are missing or were rejected. */
	TASKBOX_E_AUTH = 7,
	/* The backend asked us to slow down. */
	TASKBOX_E_RATE_LIMITED = 8,
	/* The backend did not answer in time: the outcome is unknown. */
	TASKBOX_E_TIMEOUT = 9,
	/* The backend answered something malformed or unexpected. */
	TASKBOX_E_PROTOCOL = 10,
	/* The op or an option is not offered by this provider. */
	TASKBOX_E_UNSUPPORTED = 11,
	/* A local I/O error. */
	TASKBOX_E_IO = 12,
	/* A bug in the plugin. */
	TASKBOX_E_INTERNAL = 13,
	/* The host's cancelled() callback asked the op to stop. */
	TASKBOX_E_CANCELLED = 14
};

/* Log levels for taskbox_host.log. */
enum taskbox_log_level {
	TASKBOX_LOG_ERROR = 0,
	TASKBOX_LOG_WARN = 1,
	TASKBOX_LOG_INFO = 2,
	TASKBOX_LOG_DEBUG = 3
};

/* Services the host lends a provider instance at init. Valid until fini
 * returns. Every function here is thread-safe. */
struct taskbox_host {
	uint32_t abi_major;
	uint32_t abi_minor;
	size_t struct_size; /* sizeof(struct taskbox_host) in the host */

	/* Allocator for every buffer handed back to the host. alloc and
	 * realloc return NULL on failure; free(NULL) does nothing. */
	void *(*alloc)(size_t size);
	void *(*realloc)(void *ptr, size_t size);
	void (*free)(void *ptr);

	/* Writes one line to the host's log (stderr, never the protocol
	 * stream). message is borrowed and must not carry secrets. */
	void (*log)(enum taskbox_log_level level, const char *provider,
	            const char *message);
};

/* A byte buffer handed to the host. data is NULL when len is 0, else it was
 * allocated with taskbox_host.alloc or .realloc and the host frees it. */
struct taskbox_buf {
	unsigned char *data;
	size_t len;
};

/* What create makes. Borrowed for the call. */
struct taskbox_create_req {
	size_t struct_size; /* the host's sizeof(struct taskbox_create_req) */
	const char *template_name; /* provider-defined template or image; NULL
	                              for the instance's default */
	uint32_t lifetime_s;       /* seconds the sandbox lives unless renewed;
	                              0 for the instance's default */
};

/* A command to run in a sandbox, without a shell. Borrowed for the call. */
struct taskbox_exec_req {
	size_t struct_size; /* the host's sizeof(struct taskbox_exec_req) */
	const char *const *argv; /* NULL-terminated; argv[0] is looked up in
	                            the sandbox's PATH */
	const char *const *env;  /* NULL-terminated "NAME=value" entries added
	                            to (and overriding) the sandbox's own
	                            environment; NULL for none */
	const char *cwd;         /* NULL: the sandbox's home (see read_file) */
	uint32_t timeout_ms;     /* > 0; when it passes the command's process
	                            group is killed and timed_out is set */
	size_t output_limit;     /* bytes kept per stream; the rest is read and
	                            discarded (truncated is set); 0 = no limit */

	/* Optional. Polled (at least every 100 ms) while the op waits; a
	 * nonzero return abandons the op with TASKBOX_E_CANCELLED. NULL when
	 * the host cannot cancel. */
	int (*cancelled)(void *arg);
	void *cancelled_arg;

	/* Since ABI 1.3. Nonzero: the command prints its answer as one line
	 * on stdout and ends right after it. The plugin may then return as
	 * soon as stdout holds a newline, with what stdout holds so far,
	 * exit_code -1 and the command left to end on its own; a plugin that
	 * waits for the end is right too. */
	int until_newline;

	/* Since ABI 1.4, and read only by a provider that declares
	 * TASKBOX_FEATURE_EXEC_STDIN (the host sets them for no other): the
	 * command's stdin, stdin_len bytes (at most 65536), then end of file.
	 * stdin_data NULL: stdin reads nothing, as before. Bytes that must not
	 * show in a command line (a task's typed input) travel here. */
	const unsigned char *stdin_data;
	size_t stdin_len;
};

/* What exec returns. The host zeroes it and sets struct_size; the plugin
 * fills it. Buffers belong to the host after the call, also on failure. */
struct taskbox_exec_result {
	size_t struct_size; /* the host's sizeof(struct taskbox_exec_result) */
	int exit_code;      /* 0..255, 128+N when killed by signal N, -1 when
	                       not known */
	int timed_out;      /* nonzero when timeout_ms passed */
	int out_truncated;  /* nonzero when stdout exceeded output_limit */
	int err_truncated;  /* nonzero when stderr exceeded output_limit */
	struct taskbox_buf out;
	struct taskbox_buf err;
};

/* One file of a read_files batch (ABI 1.2). The host sets struct_size,
 * path, offset and length, and data empty; the plugin sets status and,
 * when status is TASKBOX_OK, data and file_size (as read_file would). */
struct taskbox_read_item {
	size_t struct_size; /* the host's sizeof(struct taskbox_read_item) */
	const char *path;   /* as in read_file */
	uint64_t offset;
	size_t length;
	int status;              /* TASKBOX_OK or TASKBOX_E_NOT_FOUND */
	struct taskbox_buf data; /* at most length bytes from offset */
	uint64_t file_size;      /* or UINT64_MAX when not known */
};

/* The provider's op table. Required ops are non-NULL; optional ops may be
 * NULL, and the host then does without (see each). */
struct taskbox_provider_ops {
	/* Parses settings_json (a JSON object as text, "{}" when empty) and
	 * makes a provider instance. Rejects unknown or malformed settings
	 * with TASKBOX_E_INVALID and a message naming the setting and the
	 * rule. host is valid until fini. Required. */
	int (*init)(const struct taskbox_host *host, const char *settings_json,
	            void **instance, char *errbuf, size_t errlen);

	/* Releases an instance. No connection of it may be open. Required. */
	void (*fini)(void *instance);

	/* Makes a new sandbox and writes its id (NUL-terminated, at most
	 * TASKBOX_SANDBOX_ID_MAX bytes with the NUL) into id. Required.
	 * Thread-safe. */
	int (*create)(void *instance, const struct taskbox_create_req *req,
	              char *id, char *errbuf, size_t errlen);

	/* Attaches to an existing sandbox by id; a provider may resume a
	 * paused one. TASKBOX_E_NOT_FOUND when there is no such sandbox. A
	 * provider may keep what it learnt about a sandbox for a short time
	 * and answer from it without asking its backend; a sandbox destroyed
	 * meanwhile elsewhere then connects, and its first op returns
	 * TASKBOX_E_GONE. The connection is released with close. Required.
	 * Thread-safe. */
	int (*connect)(void *instance, const char *sandbox_id, void **conn,
	               char *errbuf, size_t errlen);

	/* Releases a connection; never fails. Required. */
	void (*close)(void *conn);

	/* Runs req->argv to completion (or its timeout) and returns its
	 * output and exit code in res. TASKBOX_OK means the command ran and
	 * res is complete, including a nonzero exit or timed_out; any other
	 * code means the command may or may not have run. Required. */
	int (*exec)(void *conn, const struct taskbox_exec_req *req,
	            struct taskbox_exec_result *res, char *errbuf,
	            size_t errlen);

	/* Reads at most length bytes of a file in the sandbox from offset
	 * into *data, and sets *file_size to the file's size (or UINT64_MAX
	 * when the provider cannot tell). A relative path is relative to the
	 * sandbox's home: the directory that is exec's default cwd. Reading
	 * at or past the end returns TASKBOX_OK with no bytes.
	 * TASKBOX_E_NOT_FOUND when the file does not exist. Required. */
	int (*read_file)(void *conn, const char *path, uint64_t offset,
	                 size_t length, struct taskbox_buf *data,
	                 uint64_t *file_size, char *errbuf, size_t errlen);

	/* Destroys a sandbox and everything in it: every process and file.
	 * Destroying a sandbox that is already gone returns
	 * TASKBOX_E_NOT_FOUND. Required. Thread-safe. */
	int (*destroy)(void *instance, const char *sandbox_id, char *errbuf,
	               size_t errlen);

	/* Optional. Writes len bytes to path (relative paths as in
	 * read_file), creating or replacing the file with permission bits
	 * mode, and creating missing parent directories. When NULL the host
	 * writes through exec. */
	int (*write_file)(void *conn, const char *path,
	                  const unsigned char *data, size_t len, uint32_t mode,
	                  char *errbuf, size_t errlen);

	/* Optional. Sets the sandbox to live lifetime_s seconds from now.
	 * When NULL, sandboxes of this provider are never renewed. */
	int (*renew)(void *conn, uint32_t lifetime_s, char *errbuf,
	             size_t errlen);
};

/* The descriptor a plugin's entry returns. Static and constant for the
 * life of the process. */
struct taskbox_provider {
	uint32_t abi_major;  /* TASKBOX_ABI_MAJOR the plugin was built for */
	uint32_t abi_minor;  /* TASKBOX_ABI_MINOR the plugin was built for */
	size_t struct_size;  /* sizeof(struct taskbox_provider) in the plugin */
	const char *name;    /* [a-z][a-z0-9_]*, the module's file name */
	const char *version; /* the plugin's own version, free text */
	const char *description; /* one line */
	struct taskbox_provider_ops ops;

	/* Since ABI 1.1: TASKBOX_FEATURE_* bits the provider declares. A
	 * plugin built for 1.0 reports a struct_size that ends before this
	 * field, and the host reads it as 0 (no features). */
	uint64_t features;

	/* Since ABI 1.2. Optional: reads every item like read_file, all
	 * together, so that a batch costs about one round trip to the backend
	 * instead of one per file (requests that do not depend on each other
	 * go out at once). Returns TASKBOX_OK when every item has its status:
	 * TASKBOX_OK with its data, or TASKBOX_E_NOT_FOUND. Any other failure
	 * of any item fails the batch with that item's code and a message
	 * naming its path (a sandbox gone behind an open connection:
	 * TASKBOX_E_GONE); buffers already set are the host's to free. When
	 * NULL (or a plugin built for an older minor) the host reads the items
	 * one by one with read_file. */
	int (*read_files)(void *conn, struct taskbox_read_item *const *items,
	                  size_t count, char *errbuf, size_t errlen);
};

/* exec runs argv on this host's kernel, as the server's user, with the
 * host's filesystem visible at the same paths (read-only at least), so the
 * host may run its own programs in the sandbox (for instance its native
 * task supervisor instead of the portable python3 one). */
#define TASKBOX_FEATURE_HOST_EXEC (UINT64_C(1) << 0)

/* The sandbox's processes live in this host's PID namespace: pid P inside
 * the sandbox is the host's process P. The host may then watch a task's
 * supervisor with a pidfd instead of reading /proc/P/stat through
 * read_file on every poll. A host that does not know a bit ignores it. */
#define TASKBOX_FEATURE_HOST_PIDS (UINT64_C(1) << 1)

/* Since ABI 1.4: exec gives the command the bytes of taskbox_exec_req's
 * stdin_data on its stdin. Without it the host passes such bytes another
 * way (for a task's input: in the supervisor's command line, which only
 * the sandbox's own processes should see). */
#define TASKBOX_FEATURE_EXEC_STDIN (UINT64_C(1) << 2)

/* The entry's type. Thread-safe; returns the same pointer every time. */
typedef const struct taskbox_provider *(*taskbox_provider_entry_fn)(void);

/* Exported visibility for the entry symbol. */
#if defined(__GNUC__) || defined(__clang__)
#define TASKBOX_EXPORT __attribute__((visibility("default")))
#else
#define TASKBOX_EXPORT
#endif

/* Defines a plugin's entry so that it returns &desc, for plugins of any
 * minor (struct_size = sizeof(struct taskbox_provider) in the plugin):
 *   static const struct taskbox_provider desc = { ... };
 *   TASKBOX_PROVIDER_DEFINE(desc)
 */
#ifdef __cplusplus
#define TASKBOX_PROVIDER_DEFINE(desc)                                          \
	extern "C" TASKBOX_EXPORT const struct taskbox_provider *              \
	TASKBOX_PROVIDER_ENTRY(void)                                           \
	{                                                                      \
		return &(desc);                                                \
	}
#else
#define TASKBOX_PROVIDER_DEFINE(desc)                                          \
	TASKBOX_EXPORT const struct taskbox_provider *TASKBOX_PROVIDER_ENTRY(  \
	    void);                                                             \
	TASKBOX_EXPORT const struct taskbox_provider *TASKBOX_PROVIDER_ENTRY(  \
	    void)                                                              \
	{                                                                      \
		return &(desc);                                                \
	}
#endif

#ifdef __cplusplus
}
#endif

#endif /* TASKBOX_PROVIDER_H */
