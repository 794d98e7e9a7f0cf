/* The native taskbox supervisor (docs/supervisor.md): shared declarations.
 * A C implementation of the same files, verbs and rules as
 * core/supervisor/taskbox_supervisor.py, for hosts that can run it. */
#ifndef TB_NATIVE_SUP_H
#define TB_NATIVE_SUP_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#define TB_FORMAT 1
#define TB_MAX_TASKS 128
#define TB_LOG_CAP 1048576
#define TB_TERM_GRACE_MS 1500
/* How long a SIGKILLed group may take to die before a record is written. */
#define TB_KILL_SETTLE_MS 1000
#define TB_DRAIN_GRACE_MS 2000
#define TB_CHUNK 262144
#define TB_BATCH_BYTES 65536
#define TB_BATCH_PAUSE_NS 500000
/* The running supervisor rewrites its heartbeat at least this often. */
#define TB_HEARTBEAT_MS 1000
#define TB_MAX_COMMAND 65536
#define TB_MAX_PATH 4096
#define TB_MIN_SECRET 4
#define TB_MSG_MAX 1024
/* Input (docs/supervisor.md, Input and terminals). */
#define TB_MAX_KEY 128
/* start's --request, kept in the key's link after the task id and a '.'. */
#define TB_MAX_REQUEST 128
#define TB_REQUEST_CHARS "abcdefghijklmnopqrstuvwxyz0123456789-"
/* The largest --stdout-offset or --stderr-offset of the wait verb. */
#define TB_MAX_OFFSET 999999999999LL
#define TB_MAX_DATA 65536 /* bytes of one write, and the relay's buffer */
#define TB_MAX_CONTROL_LINE 64
#define TB_WRITE_WAIT_MS 2000
/* A nullable integer field of a record that is null. */
#define TB_NULL LLONG_MIN

/* Refusal codes; the value is the exit status. */
enum tb_code {
	TB_INTERNAL = 1,
	TB_INVALID = 2,
	TB_LIMIT = 3,
	TB_EXISTS = 4,
	TB_NOT_FOUND = 5,
	TB_RUNNING = 6,
	TB_CLOSED = 7
};

/* ---- main.c ---- */
/* Prints {"error": MESSAGE, "code": CODE} and exits with CODE. */
_Noreturn void tb_refuse(enum tb_code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Out of memory: an internal refusal (the daemon's stdout is /dev/null, so
 * there it only ends the process; its record then stays running and the
 * host reports the supervisor gone). */
_Noreturn void tb_oom(void);

/* ---- json.c: output ---- */
struct tb_str {
	char *p;
	size_t len, cap;
};
void tb_str_add(struct tb_str *s, const void *data, size_t n);
void tb_str_cstr(struct tb_str *s, const char *text);
void tb_str_fmt(struct tb_str *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void tb_str_free(struct tb_str *s);
/* Appends BYTES as a JSON string: invalid UTF-8 becomes U+FFFD (one per
 * maximal invalid subpart, as Python's "replace"), non-ASCII stays raw. */
void tb_json_str(struct tb_str *s, const void *bytes, size_t n);
/* Characters in BYTES as Python counts them after a surrogateescape
 * decode: one per UTF-8 sequence, one per invalid byte. */
size_t tb_utf8_chars(const void *bytes, size_t n);
/* Length of a valid UTF-8 sequence at S (n > 0 bytes available), or 0 and
 * *bad = the length of the maximal invalid subpart there (>= 1). */
size_t tb_utf8_seq(const unsigned char *s, size_t n, size_t *bad);
/* Writes S to stdout followed by a newline. */
void tb_say(struct tb_str *s);

/* ---- jscan.c: reading status records ---- */
enum tb_jtype {
	TB_J_STR,
	TB_J_NUM,
	TB_J_INT,
	TB_J_BOOL,
	TB_J_NULL,
	TB_J_OBJ,
	TB_J_ARR
};
struct tb_jmember {
	const char *key; /* raw, between the quotes */
	size_t key_len;
	enum tb_jtype type;
	const char *val; /* raw span of the value */
	size_t val_len;
};
#define TB_JMEMBERS_MAX 64
struct tb_jobject {
	struct tb_jmember m[TB_JMEMBERS_MAX];
	size_t n;
};
/* Parses TEXT as one JSON object (whitespace around allowed, UTF-8 only);
 * records its first TB_JMEMBERS_MAX members. Returns 0, or -1 and a reason. */
int tb_jobject_parse(const char *text, size_t len, struct tb_jobject *o,
                     const char **why);
/* The last member named KEY, or NULL. */
const struct tb_jmember *tb_jget(const struct tb_jobject *o, const char *key);
/* The member KEY as an integer, or TB_NULL when absent or not an integer. */
long long tb_jint(const struct tb_jobject *o, const char *key);
/* Compares the string member KEY (unescaped) with WANT. */
int tb_jstr_is(const struct tb_jobject *o, const char *key, const char *want);

/* ---- record.c ---- */
struct tb_record {
	char task_id[33];
	const char *state;
	struct tb_str command; /* the masked command, raw bytes */
	const char *cwd;       /* NULL: null */
	long long timeout, started_at, finished_at, exit_code;
	long long supervisor_pid, supervisor_start, pgid, pgid_start;
	unsigned long long stdout_bytes, stderr_bytes;
	int stdout_truncated, stderr_truncated, cancel_requested;
	char *error;            /* NULL: null; else owned */
	const char *stdin_mode; /* "null", "pipe" or "tty" */
	const char *key;        /* NULL: null */
	const char *signal;     /* NULL: null */
	const char *ended_by;   /* NULL: null */
};
/* Appends REC as one JSON object, keys in format 1's order. */
void tb_record_json(const struct tb_record *rec, struct tb_str *out);
/* Replaces status.json in DFD: temp file, fsync, rename, fsync of DFD.
 * Returns 0, or -1 with errno set. */
int tb_record_write(int dfd, const struct tb_record *rec);
/* The final record: written to a temp file and renamed over status.json at
 * once, so a waiting reader sees the end without waiting for the disk; then
 * the NLOGS log descriptors, the record and DFD are fsynced before it
 * returns. -1 (errno set) only when the record is not in place; a failed
 * fsync after that is not reported (the record is final). */
int tb_record_publish(int dfd, const struct tb_record *rec, const int *logs,
                      size_t nlogs);
/* Replaces heartbeat in DFD with the wall clock in ms: temp file, rename,
 * no fsync (not durable state). Failures are ignored. */
void tb_heartbeat_write(int dfd);

/* Appends RAW (a record object O) to OUT with "NAME": true added. */
void tb_add_flag(struct tb_str *out, const struct tb_str *raw,
                 const struct tb_jobject *o, const char *name);
/* Appends RAW (a record object O) to OUT with MEMBERS ("name":value,...,
 * or empty) added. */
void tb_add_members(struct tb_str *out, const struct tb_str *raw,
                    const struct tb_jobject *o, const struct tb_str *members);

/* Writes all n bytes, retrying after EINTR. Returns 0, or -1 (errno). */
int tb_write_all(int fd, const void *data, size_t n);
/* Reads TDIR/status.json into RAW (trailing whitespace cut) and parses it.
 * Returns 1, 0 when there is no record, or -1 with a reason in MSG. */
int tb_status_read(const char *tdir, struct tb_str *raw, struct tb_jobject *o,
                   char *msg, size_t msglen);
int tb_state_terminal(const struct tb_jobject *o);
/* Fields 3 (state letter), 5 (process group) and 22 (starttime) of
 * /proc/PID/stat. */
struct tb_proc {
	char state;
	long long pgrp;
	long long start;
};
/* Reads them into OUT; -1 when there is no such process. */
int tb_proc_stat(long long pid, struct tb_proc *out);
/* PID is a live, non-zombie process that started at START. */
int tb_verified(long long pid, long long start);

/* ---- clock.c ---- */
/* CLOCK_MONOTONIC in milliseconds. */
long long tb_mono_ms(void);
void tb_sleep_ms(long ms);

/* ---- group.c ---- */
/* Some process of group PGID is alive (not a zombie). */
int tb_group_live(long long pgid);
/* Returns once no process of group PGID is alive, or after WITHIN_MS;
 * meanwhile BEAT_DFD's heartbeat (none for -1) is rewritten every half
 * TB_HEARTBEAT_MS, starting when the group is found alive. */
void tb_group_await_gone(long long pgid, long long within_ms, int beat_dfd);

/* ---- mask.c ---- */
struct tb_secrets {
	char **v; /* longest first */
	size_t *len;
	size_t n, max_len;
};
/* The values (4+ bytes) of environment variables named like secrets. */
void tb_secrets_load(struct tb_secrets *s);
void tb_secrets_free(struct tb_secrets *s);
struct tb_masker {
	const struct tb_secrets *s;
	unsigned char *work, *tail; /* tail: the held bytes */
	size_t cap, held;
	long *next; /* per secret: cached next match, -2 unknown, -1 none */
};
void tb_masker_init(struct tb_masker *m, const struct tb_secrets *s);
void tb_masker_free(struct tb_masker *m);
/* Masks the held tail joined with DATA; *OUT (inside the masker, valid
 * until the next call) receives the bytes safe to write. FINAL flushes the
 * held tail. Returns the length of *OUT. */
size_t tb_mask_feed(struct tb_masker *m, const void *data, size_t n, int final,
                    const unsigned char **out);

/* ---- logs.c ---- */
struct tb_stream {
	int fd, log, open, big, truncated, masking, discarding;
	int splicing; /* discarding through splice(2) until it fails */
	unsigned long long kept;
	struct tb_masker masker;
};
void tb_stream_init(struct tb_stream *st, int fd, int log,
                    const struct tb_secrets *s);
/* Reads once. Returns the bytes read, 0 when none or at EOF (then the
 * stream is closed), -1 on a failure to write the log (errno set). */
ssize_t tb_stream_read(struct tb_stream *st);
/* Closes the pipe, flushing the masker's held tail. 0, or -1 (errno). */
int tb_stream_close(struct tb_stream *st);
void tb_stream_free(struct tb_stream *st);

/* ---- base64.c ---- */
/* Decodes IN (N characters: the standard alphabet, padded, canonical, no
 * line breaks) into OUT. Returns 0 and *OUTLEN, or -1 when IN is anything
 * else or decodes to more than OUTCAP bytes. */
int tb_base64_decode(const char *in, size_t n, unsigned char *out,
                     size_t outcap, size_t *outlen);
/* Appends the encoding of IN[0..N) to OUT. */
void tb_base64_add(struct tb_str *out, const unsigned char *in, size_t n);

/* ---- signame.c ---- */
/* The name docs/supervisor.md gives signal SIG ("SIG" N past the table,
 * then written into BUF). */
const char *tb_signal_name(int sig, char *buf, size_t len);

/* ---- tty.c ---- */
/* Opens a pseudo-terminal pair sized ROWS x COLS: *MASTER non-blocking,
 * both close-on-exec, neither a controlling terminal here. 0, or -1. */
int tb_pty_open(int rows, int cols, int *master, int *slave);
/* Sets the terminal's window size (TIOCSWINSZ). 0, or -1 (errno). */
int tb_pty_resize(int master, int rows, int cols);
/* The terminal's end-of-file character (c_cc[VEOF]; ^D if unknown). */
unsigned char tb_pty_veof(int master);

/* ---- relay.c ---- */
struct pollfd;
struct tb_relay {
	int fifo, control, target; /* target: the stdin pipe or the master */
	int tty, eof, done, broken, active, skipping;
	size_t off, len, line_len; /* buf[off..len) waits for the target */
	char line[TB_MAX_CONTROL_LINE];
	unsigned char buf[TB_MAX_DATA];
};
/* Makes the FIFOs stdin and control in DFD (0600) and opens each O_RDWR,
 * non-blocking. 0, or -1 with errno. */
int tb_relay_fifos(int dfd, int *fifo, int *control);
/* TARGET < 0: the relay stays inactive (--stdin null). */
void tb_relay_init(struct tb_relay *r, int fifo, int control, int target,
                   int tty);
/* Fills P[0..2] (control, stdin FIFO, target) with what the relay waits
 * for now: the target only while bytes wait, the FIFO only while the
 * buffer is empty and eof is not yet done; fd -1 for the others. */
void tb_relay_events(const struct tb_relay *r, struct pollfd *p);
/* Reads the control FIFO once and applies its whole lines (eof, resize).
 * 0, or -1 with errno. */
int tb_relay_control(struct tb_relay *r);
/* Writes what the target takes, refills from the FIFO when the buffer is
 * empty, and carries out an asked-for eof once both are. 0, or -1. */
int tb_relay_pump(struct tb_relay *r);
/* The command has ended: relays no more and closes the target. */
void tb_relay_stop(struct tb_relay *r);

/* ---- run.c ---- */
enum tb_stdin { TB_STDIN_NULL, TB_STDIN_PIPE, TB_STDIN_TTY };
struct tb_job {
	int dfd, ready_fd, log_out, log_err;
	enum tb_stdin stdin_mode;
	int rows, cols;
	mode_t umask;
	const char *command, *cwd;
	long long timeout;
	struct tb_record *rec;
	struct tb_secrets *secrets;
	/* Set by tb_run: the first cause ("cancelled", "timed_out") or NULL,
	 * and the signal that ended /bin/sh or 0. */
	const char *reason;
	int sig;
};
/* Runs the command to its end and writes the final record. Returns 0, or
 * -1 with a message in ERR (the caller writes the supervisor error). */
int tb_run(struct tb_job *job, char *err, size_t errlen);
/* The group (if any) gets SIGKILL. */
void tb_run_kill_group(const struct tb_record *rec);
void tb_signal_ready(int *ready_fd);

/* How a task ended (ended_by) for the terminal state's REASON (NULL, or
 * "cancelled" or "timed_out"; anything else: "exit"). */
const char *tb_ended_by(const char *reason);

/* ---- spawn.c ---- */
/* The command's descriptors: IN (-1: keep /dev/null), OUT and ERR; with
 * TTY all three are the terminal's slave, which becomes the controlling
 * terminal of the command's own session. */
struct tb_child_fds {
	int in, out, err, tty;
};
/* Forks the command as the leader of its own group (JOB's record gets the
 * pgid and its start time). Returns 0 once it has exec'd, or -1 with the
 * reason it could not be started in ERR. */
int tb_spawn(const struct tb_job *job, const struct tb_child_fds *fds,
             char *err, size_t errlen);

/* ---- root.c ---- */
/* Checks (with CREATE makes, 0700) the root; returns the locked .lock fd,
 * or -1 when the root is absent. Refuses like docs/supervisor.md says. */
int tb_root_lock(const char *root, int create);
/* Opens (creating, 0600) and exclusively flock(2)s PATH; returns the fd.
 * Refuses with internal on failure. */
int tb_lock_file(const char *path);
/* Number of task directories in ROOT; fills NAMES (33 bytes each, up to
 * MAX) when not NULL. Refuses a root that is not a directory. */
size_t tb_task_names(const char *root, char (*names)[33], size_t max);
int tb_is_task_name(const char *name);
/* Deletes PATH and everything below it without following symlinks. */
int tb_remove_tree(const char *path);

/* ---- keys.c ---- */
/* Start's step 1a: when KEY's link names a task with a record, prints it
 * with "existing": true added, and "request" when the link keeps one, and
 * returns 1; else 0 (the key is free). */
int tb_key_existing(const char *root, const char *key);
/* Points KEY's link at ID, then '.' and REQUEST when not NULL (tmp
 * symlink renamed over it). 0, or -1. */
int tb_key_link(const char *root, const char *key, const char *id,
                const char *request);
/* Removes the link of the record O's idempotency_key when it names ID. */
void tb_key_release(const char *root, const struct tb_jobject *o,
                    const char *id);

/* ---- verbs ---- */
struct tb_opts {
	const char *verb, *root, *id, *timeout, *command, *cwd, *wait;
	const char *stdin_mode, *rows, *cols, *key, *request, *data, *eof;
	const char *stdout_offset, *stderr_offset;
	const char *page_limit, *stdout_page_offset, *stderr_page_offset;
	const char *tasks, *lease, *generation;
};
void tb_args_parse(int argc, char **argv, struct tb_opts *o);
void tb_check_path(const char *name, const char *value);
void tb_check_key(const char *key);
/* start's --request: the host's digest of the request, kept with KEY. */
void tb_check_request(const char *key, const char *request);
long long tb_int_option(const char *name, const char *value, long long low,
                        long long high);
/* TDIR: the task directory of O's --root and --id; refuses not_found when
 * there is none. */
void tb_task_dir(const struct tb_opts *o, char *tdir, size_t len);
/* tb_status_read(), refusing internal when the record is not JSON. */
int tb_read_record(const char *tdir, struct tb_str *raw, struct tb_jobject *o);
/* Whether a record's supervisor is gone (not verified). */
int tb_supervisor_gone(const struct tb_jobject *o);
/* Reads the record again into RAW and O; keeps both when it vanished. */
void tb_reread(const char *tdir, struct tb_str *raw, struct tb_jobject *o);
/* A verb's end: prints OUT, frees OUT, RAW and O (malloc'd); returns 0. */
int tb_say_and_free(struct tb_str *out, struct tb_str *raw,
                    struct tb_jobject *o);
int tb_verb_start(const struct tb_opts *o);
int tb_verb_cancel(const struct tb_opts *o);
int tb_verb_remove(const struct tb_opts *o);
int tb_verb_write(const struct tb_opts *o);
int tb_verb_resize(const struct tb_opts *o);
int tb_verb_list(const struct tb_opts *o);
int tb_verb_wait(const struct tb_opts *o);
int tb_verb_watch(const struct tb_opts *o);

/* ---- wait.c: what the wait and watch verbs share ---- */
/* How often a task is looked at, in milliseconds, where nothing tells the
 * verb of a change; and how long a log written below its offset holds
 * back the next notice of a write. */
#define TB_LOOK_MS 5
/* How often a task is looked at anyway whose supervisor, record and (given
 * offsets) logs are all watched: a safety net, not a need. */
#define TB_WATCHED_LOOK_MS 1000
/* The largest --page-limit: get_task's largest page. */
#define TB_PAGE_LIMIT_MAX 65536
/* Appends "STREAM_page":{"offset":O,"size":S,"data":"BASE64"} to OUT: at
 * most LIMIT bytes of TDIR's log STREAM from OFFSET, read now, and the
 * log's size after the read (0 and no bytes for a log not created yet). */
void tb_add_page(struct tb_str *out, const char *tdir, const char *stream,
                 long long offset, long long limit);
/* A pidfd of a running record's supervisor, opened before it is verified
 * (a pid reused after the check cannot be watched instead), or -1 (no
 * pidfd_open here, a supervisor gone). */
int tb_supervisor_pidfd(const struct tb_jobject *o);
/* Reads off the notices queued on inotify descriptor fd (-1: none). */
void tb_read_off(int fd);

/* ---- watchargs.c: the watch verb's options ---- */
/* The most interests of one watch verb. */
#define TB_MAX_INTERESTS 1024
#define TB_MAX_LEASE 64
#define TB_MAX_GENERATION 9007199254740991LL
/* One interest of --tasks; so and eo are -1 when not asked for. */
struct tb_interest {
	char id[33];
	long long so, eo, pl, spo, epo;
	size_t task; /* its task in the verb's table of distinct ids */
};
/* Parses --tasks VALUE into *OUT (malloc'd, *N entries), refusing a
 * malformed list with the interest's position and the rule. */
void tb_interests_parse(const char *value, struct tb_interest **out, size_t *n);
/* Checks --lease and --generation (both or neither); returns the
 * generation, or -1 when there is no lease. */
long long tb_lease_options(const struct tb_opts *o);

/* ---- lease.c: the watch verb's lease (<root>/.watch/NAME) ---- */
/* The generation the lease file PATH holds, or -1 (none, malformed). */
long long tb_lease_read(const char *path);
/* Writes GEN into ROOT/.watch/NAME (PATH receives its path) unless it
 * holds a greater one, under the directory's flock(2). Returns 1 when
 * taken (also when there is no root: nothing to lease), 0 superseded. */
int tb_lease_take(const char *root, const char *name, long long gen, char *path,
                  size_t len);

#endif
