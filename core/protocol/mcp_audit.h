/* The audit trail's records of calls (base/audit.h writes them): a
 * "request" record before a call that changes something runs (every call
 * with audit.reads), and a "response" record with its outcome before its
 * answer leaves. A call whose request record cannot be written is refused
 * and does nothing. Private to the protocol layer. */
#ifndef TB_MCP_AUDIT_H
#define TB_MCP_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct tb_call;
struct tb_mcp;

/* Keeps a client's clientInfo ({name, version}; NULL or malformed:
 * nothing) for the records of s's calls. The reader only. */
void tb_mcp_note_client(struct tb_mcp *s, const json_t *info);

/* Writes c's request record when c is recorded. Returns false, with why
 * naming the audit trail and the reason, when it could not be written:
 * c must then be refused without running. */
bool tb_mcp_audit_begin(struct tb_call *c, char *why, size_t whylen);

/* Notes what c's handler returned (rc, out; borrowed): the sandbox and
 * task it named, and whether it failed. */
void tb_mcp_audit_note(struct tb_call *c, int rc, const json_t *out);

/* Writes c's response record for its answer msg (borrowed; NULL: out of
 * memory, or not answered). */
void tb_mcp_audit_end(struct tb_call *c, const json_t *msg);

#endif /* TB_MCP_AUDIT_H */
