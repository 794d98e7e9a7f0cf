/* The host side of the supervisor contract (docs/supervisor.md): running
 * its verbs through a provider's exec, reading status records with
 * read_file, and deciding whether a recorded supervisor is still alive. */
#ifndef TB_SUP_CLIENT_H
#define TB_SUP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tasks/box.h"
#include "tasks/sup_record.h"

/* The task root, relative to the sandbox's home. */
#define TB_TASK_ROOT ".taskbox/tasks"

/* What a read of status.json asks for: a record holds the command (at most
 * 96 KiB encoded) and small fields; 1 MiB is far more than any record. */
#define TB_STATUS_MAX (1024 * 1024)

/* Outcomes of a verb. */
enum tb_sup_outcome {
	TB_SUP_RECORD,  /* a status record was printed and parsed */
	TB_SUP_REFUSED, /* refused for sure (code in code): by the supervisor,
	                 * or "unsupported": no supervisor can run there */
	TB_SUP_UNSURE,  /* exec failed, timed out or printed nothing usable */
};

struct tb_sup_reply {
	enum tb_sup_outcome outcome;
	struct tb_task_record rec; /* when TB_SUP_RECORD */
	char code[16];             /* when TB_SUP_REFUSED: "limit", ... */
	char message[TB_ERR_MAX];  /* what went wrong, when not a record */
};

void tb_sup_reply_clear(struct tb_sup_reply *r);

/* What `start` is asked to run. */
struct tb_sup_start_req {
	const char *task_id; /* the new task's id */
	const char *command;
	const char *cwd;        /* NULL: the home */
	unsigned timeout_s;     /* 1..3600 */
	const char *stdin_mode; /* "null", "pipe" or "tty"; NULL: "null" */
	unsigned rows, cols;    /* the terminal's size (tty); 0: default */
	const char *key;        /* idempotency key, or NULL */
	const char *request;    /* with a key: tb_key_request's digest, kept
	                           with it; NULL: none */
};

/* `start`: launches the command under a new supervisor. With a key that
 * already started a task, the reply is that task's record (its own
 * task_id, rec.existing set) and nothing was started. */
void tb_sup_start(struct tb_box *box, const struct tb_sup_start_req *req,
                  struct tb_sup_reply *reply);

/* `write`: sends data[0..len) (at most 65536 bytes) to a task's stdin,
 * then closes it when eof. Returns 0 with *written (bytes the task's pipe
 * took) and *eof_done, or -1 with reply's outcome REFUSED (code "closed",
 * "not_found", ...) or UNSURE and its message. */
int tb_sup_write(struct tb_box *box, const char *task_id,
                 const unsigned char *data, size_t len, bool eof,
                 size_t *written, bool *eof_done, struct tb_sup_reply *reply);

/* `resize`: sets a tty task's window size. Returns 0, or -1 like
 * tb_sup_write. */
int tb_sup_resize(struct tb_box *box, const char *task_id, unsigned rows,
                  unsigned cols, struct tb_sup_reply *reply);

/* `cancel --wait 3`: TERM then KILL of the task's group, then the last
 * record seen. */
void tb_sup_cancel(struct tb_box *box, const char *task_id,
                   struct tb_sup_reply *reply);

/* A task whose supervisor is gone cannot enforce its timeout: kills what
 * is left of its process group through the `cancel` verb (which verifies
 * the group's leader inside the sandbox first), once per task and server
 * process. Returns 1 when it did so now, 0 when it was done before. */
int tb_sup_reap_orphans(struct tb_box *box, const char *task_id);

/* The reason given for a task whose supervisor is gone. */
#define TB_SUP_GONE_WHY                                                        \
	"the supervisor is gone: the task's outcome was never recorded, and "  \
	"what was left of its process group was killed"

/* What stops a verb early: cancelled(arg) nonzero abandons its exec (the
 * provider polls it at least every 100 ms); answer_line nonzero lets the
 * provider return once the verb's answer line is in, before the verb's
 * own end (the ABI's until_newline). */
struct tb_sup_stop {
	int (*cancelled)(void *arg);
	void *arg;
	int answer_line;
};

/* The largest page the wait verb reads with its answer. */
#define TB_SUP_PAGE_LIMIT_MAX 65536u

/* What the wait verb is asked. */
struct tb_sup_wait_req {
	unsigned wait_s; /* 1..60 */
	/* Answer when a log holds a byte here; negative: not asked about. */
	int64_t stdout_offset, stderr_offset;
	/* Pages read with the answer: at most page_limit (1 to
	 * TB_SUP_PAGE_LIMIT_MAX) bytes of each log from its page offset; 0:
	 * none. */
	size_t page_limit;
	uint64_t stdout_page_offset, stderr_page_offset;
};

/* `wait`: answers with the task's record once it ended, its supervisor is
 * gone (rec.supervisor_gone), a log holds a byte at its offset, or
 * req->wait_s passed. A sandbox whose supervisor has no such verb refuses
 * it ("invalid"). */
void tb_sup_wait(struct tb_box *box, const char *task_id,
                 const struct tb_sup_wait_req *req,
                 const struct tb_sup_stop *stop, struct tb_sup_reply *reply);

/* The most interests one watch verb is given, and the page bytes (before
 * base64) its interests may ask for together. */
#define TB_SUP_WATCH_MAX 1024u
#define TB_SUP_WATCH_PAGE_BUDGET (16u * 1024u * 1024u)

/* `watch` (docs/supervisor.md): answers once any interest of the list
 * TASKS ("ID/SO/EO/PL/SPO/EPO,...") is met, or wait_s (1..60) passed, or
 * a verb of the same lease with a higher generation started. Returns its
 * answer ({"answers": [{"index", "record"} or {"index", "missing"}],
 * "superseded"}, new), or NULL with reply's outcome REFUSED or UNSURE and
 * its message. */
json_t *tb_sup_watch(struct tb_box *box, const char *tasks, unsigned wait_s,
                     const char *lease, uint64_t generation,
                     const struct tb_sup_stop *stop,
                     struct tb_sup_reply *reply);

/* The pages of a wait's answer (rec, asked with req) into page[0]
 * (stdout) and page[1] (stderr), as a batched read of page_limit bytes at
 * the page offsets gives them (the caller frees their data). Returns 0, or
 * -1 when the answer holds no such pages. */
int tb_sup_wait_pages(const struct tb_task_record *rec,
                      const struct tb_sup_wait_req *req,
                      struct taskbox_read_item page[2]);

/* `remove`: deletes a finished task's directory. */
void tb_sup_remove(struct tb_box *box, const char *task_id,
                   struct tb_sup_reply *reply);

/* `list`: every task directory's record as the supervisor printed it,
 * newest first. Returns 0 with *tasks (a new JSON array), or -1 with the
 * reason in err. */
int tb_sup_list(struct tb_box *box, json_t **tasks, char *err, size_t errlen);

/* Reads status.json of a task. Returns TASKBOX_OK with *rec filled,
 * TASKBOX_E_NOT_FOUND when there is no record, or another status with the
 * reason in err (a record that does not parse is TASKBOX_E_PROTOCOL). */
int tb_sup_read_status(struct tb_box *box, const char *task_id,
                       struct tb_task_record *rec, char *err, size_t errlen);

/* Parses status.json's text as read (for instance in a batch), like
 * tb_sup_read_status after its read: TASKBOX_OK or TASKBOX_E_PROTOCOL. */
int tb_sup_parse_status(const struct tb_box *box, const char *task_id,
                        const struct taskbox_buf *data,
                        struct tb_task_record *rec, char *err, size_t errlen);

/* The path of a file in a task's directory (name: "status.json",
 * "stdout", "stderr", "heartbeat"), into buf. */
const char *tb_sup_task_path(char *buf, size_t len, const char *task_id,
                             const char *name);

/* True when the task's directory exists (one small exec): tells a start
 * that was interrupted before its first record from a task that never
 * was. Returns 1, 0, or -1 when it could not tell (err says why). */
int tb_sup_task_dir_exists(struct tb_box *box, const char *task_id, char *err,
                           size_t errlen);

/* Whether the supervisor a running record names is still that process:
 * its /proc/PID/stat starttime equals the recorded one. Uses read_file,
 * falling back to one `cat` exec when the provider cannot serve /proc
 * through it; where the provider shares this host's pids, a supervisor
 * found alive is then watched through a pidfd (pid_watch.h). Returns 1
 * alive, 0 gone, -1 could not tell (err says why). */
int tb_sup_alive(struct tb_box *box, const struct tb_task_record *rec,
                 char *err, size_t errlen);

#endif /* TB_SUP_CLIENT_H */
