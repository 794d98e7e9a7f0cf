/* A connection to one sandbox for the length of one tool call, and the
 * provider calls made through it, with provider errors turned into messages
 * a client can act on. Connections are never cached: each call opens its
 * own and closes it. */
#ifndef TB_BOX_H
#define TB_BOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/registry.h"
#include "host/sandbox_ref.h"
#include "taskbox/provider.h"

/* Room for a message that carries a plugin's text. */
#define TB_ERR_MAX 1024

struct tb_box {
	const struct tb_instance *inst;
	struct tb_sandbox_ref ref;
	char id[TB_SANDBOX_REF_MAX]; /* the full id, as the client sees it */
	void *conn;                  /* NULL until opened */
};

/* What a status code means, in words ("does not exist", ...). */
const char *tb_status_text(int status);

/* Resolves a full sandbox id to its configured instance without touching
 * the provider. field names the argument in messages. Returns 0, or -1 with
 * a message in err. */
int tb_box_resolve(const char *sandbox_id, const char *field,
                   struct tb_box *box, char *err, size_t errlen);

/* Resolves and connects. On failure returns the provider's status (or
 * TASKBOX_E_INVALID for a bad id) with a message naming the sandbox. */
int tb_box_open(const char *sandbox_id, const char *field, struct tb_box *box,
                char *err, size_t errlen);

/* Connects a resolved box; returns like tb_box_open. */
int tb_box_connect(struct tb_box *box, char *err, size_t errlen);

/* The message of a sandbox that does not exist, "sandbox ID: does not
 * exist": the same whatever the provider said, and the same for one that
 * is not the caller's (ownership.h). */
void tb_box_not_found(const struct tb_box *box, char *err, size_t errlen);

/* Closes the connection, if open. */
void tb_box_close(struct tb_box *box);

/* Runs argv (no shell). cancelled/arg may be NULL. *res is zeroed and
 * filled; the caller frees it with tb_exec_result_free, also on failure.
 * Returns the provider's status; on failure err says what happened. */
int tb_box_exec(struct tb_box *box, const char *const *argv, const char *cwd,
                uint32_t timeout_ms, size_t output_limit,
                int (*cancelled)(void *), void *arg,
                struct taskbox_exec_result *res, char *err, size_t errlen);

/* Runs req (the ABI's request: argv, cwd, limits, cancel hook,
 * until_newline) as tb_box_exec does; sets req->struct_size. */
int tb_box_exec_req(struct tb_box *box, struct taskbox_exec_req *req,
                    struct taskbox_exec_result *res, char *err, size_t errlen);

void tb_exec_result_free(struct taskbox_exec_result *res);

/* Reads a page of a file. *data is zeroed first; free it with
 * tb_buf_free. Returns the provider's status. */
int tb_box_read(struct tb_box *box, const char *path, uint64_t offset,
                size_t length, struct taskbox_buf *data, uint64_t *file_size,
                char *err, size_t errlen);

void tb_buf_free(struct taskbox_buf *buf);

/* Reads every item (path, offset, length set by the caller; the rest
 * zeroed here) in one provider batch when the provider offers read_files,
 * else one by one. Each item's status is TASKBOX_OK or TASKBOX_E_NOT_FOUND
 * on success. Returns the provider's status; on failure err says what
 * happened and every item's data is freed. Free the items' data with
 * tb_read_items_free. */
int tb_box_read_many(struct tb_box *box, struct taskbox_read_item *const *items,
                     size_t count, char *err, size_t errlen);

/* Whether the provider reads a batch in about one round trip. */
bool tb_box_batches_reads(const struct tb_box *box);

void tb_read_items_free(struct taskbox_read_item *const *items, size_t count);

/* Writes the whole file PATH (created or replaced, with permission bits
 * MODE, missing parents created) through the provider's write_file, or
 * through exec where it has none. Returns the provider's status; on failure
 * err names the sandbox and the path. */
int tb_box_write(struct tb_box *box, const char *path,
                 const unsigned char *data, size_t len, uint32_t mode,
                 char *err, size_t errlen);

/* Sets the sandbox to live lifetime_s from now when the provider can; 0
 * when done or not offered (renewal is best effort and only logged). */
void tb_box_renew(struct tb_box *box, uint32_t lifetime_s);

/* Destroys the sandbox by id (no connection needed). Returns the status. */
int tb_box_destroy(struct tb_box *box, char *err, size_t errlen);

#endif /* TB_BOX_H */
