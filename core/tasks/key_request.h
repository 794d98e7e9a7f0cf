/* What an idempotency key keeps of the request that first used it: a short
 * SHA-256 digest of each field of start_task's request, so a reused key
 * whose request differs is refused with the fields that differ named,
 * while no value is kept (a command or a cwd may hold a secret). */
#ifndef TB_KEY_REQUEST_H
#define TB_KEY_REQUEST_H

#include <stddef.h>

#include "tasks/sup_client.h"

/* "v1" and five digests of 16 hexadecimal digits, '-' between: within the
 * supervisor's --request (a-z, 0-9 and '-', at most 128 characters). */
#define TB_KEY_REQUEST_LEN (2 + 5 * 17)

/* Writes the digest of req's command, cwd, timeout, stdin and tty (the
 * mode and the terminal's size) into out (TB_KEY_REQUEST_LEN + 1 bytes).
 * Returns 0, or -1 when the digest could not be made. Thread-safe. */
int tb_key_request(const struct tb_sup_start_req *req, char *out);

/* Compares the digest kept with a key with this request's: 0 when they
 * match, 1 when they differ, with the differing fields named in what
 * ("command", "cwd and timeout", ...), -1 when kept is not a digest of
 * this version (nothing can be compared). */
int tb_key_request_diff(const char *kept, const char *mine, char *what,
                        size_t whatlen);

#endif
