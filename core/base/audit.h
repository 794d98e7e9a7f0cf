/* The audit trail: one JSON object a line, each written with one write(2)
 * to a file opened with O_APPEND (or to stderr), for every call that
 * changes something and every refusal. Written before the answer; a call
 * whose record cannot be written is refused (the callers do that), and the
 * trail says it is degraded until a record goes through again. One trail
 * per process. Thread-safe unless stated. */
#ifndef TB_AUDIT_H
#define TB_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Opens the trail at path ("-": stderr); reads: read-only calls are
 * recorded too. Returns 0, or -1 with why. Before serving; not
 * thread-safe. */
int tb_audit_open(const char *path, bool reads, char *why, size_t whylen);

/* Closes the trail (after serving). */
void tb_audit_close(void);

/* Whether a trail is open, and whether it records reads. */
bool tb_audit_enabled(void);
bool tb_audit_reads(void);

/* Asks for the file to be opened again by path before the next record
 * (logrotate's SIGHUP). Async-signal-safe. */
void tb_audit_reopen_soon(void);

/* Writes record (borrowed) as one line, its "time" set first (RFC 3339,
 * UTC, milliseconds). Returns 0; or -1 with the reason in why (the trail
 * is then degraded) when it could not be written whole. Without a trail,
 * returns 0 and writes nothing. */
int tb_audit_write(json_t *record, char *why, size_t whylen);

/* Whether the last record could not be written (cleared by the next that
 * can). */
bool tb_audit_degraded(void);

/* Sets out to now as RFC 3339 UTC with milliseconds:
 * 2026-12-07T05:44:18.123Z. */
void tb_audit_time(char out[32]);

#endif /* TB_AUDIT_H */
