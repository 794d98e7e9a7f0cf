/* MCP 2026-07-28 (the modern era) beside 2024-11-05 .. 2025-11-25 (the
 * legacy one): the _meta envelope every modern request carries, the
 * answer to server/discover, and what every modern result carries. */
#ifndef TB_MCP_ERA_H
#define TB_MCP_ERA_H

#include <jansson.h>
#include <stdbool.h>

#define TB_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define TB_META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define TB_META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define TB_EXT_TASKS "io.modelcontextprotocol/tasks"

/* The modern versions served, newest first, NULL-terminated. */
extern const char *const tb_mcp_modern_versions[];

enum tb_mcp_era {
	TB_ERA_UNDECIDED = 0, /* nothing but server/discover seen yet */
	TB_ERA_LEGACY,        /* initialize: a session */
	TB_ERA_MODERN,        /* requests with the _meta envelope */
};

/* Whether a request's params claim a protocol version in _meta (the key
 * is there, whatever its value): the body's era is modern. */
bool tb_mcp_claims(json_t *params);

/* The version a request's params claim in _meta when it is a string,
 * else NULL. */
const char *tb_mcp_claimed_version(json_t *params);

/* Whether a request's _meta holds the modern envelope's other keys
 * (client capabilities or info) without the version: an envelope that
 * names no version, not a legacy request. */
bool tb_mcp_claims_partly(json_t *params);

/* The error response for id when a modern request's envelope is wrong,
 * else NULL: -32022 {supported, requested} for a version not served,
 * -32602 naming the key for a malformed one. */
json_t *tb_mcp_envelope_error(json_t *id, json_t *params);

/* The -32022 response for a version not served in the modern era. */
json_t *tb_mcp_unsupported_version(json_t *id, const char *requested);

/* Whether the request's _meta client capabilities declare extension
 * name (capabilities.extensions[name] is an object). */
bool tb_mcp_declares(json_t *params, const char *name);

/* The server/discover result: both eras' versions, the capabilities (the
 * Tasks extension when with_tasks), serverInfo, cacheable. */
json_t *tb_mcp_discover_result(bool with_tasks);

/* What a discover or tools/list result may be cached for: the tools never
 * change while a server runs, and every client sees the same. */
#define TB_MCP_TTL_MS 60000

/* Marks a result cacheable for ttl_ms by anyone (ttlMs, cacheScope). */
void tb_mcp_cacheable(json_t *result, long ttl_ms);

/* Adds what a modern response's result carries: resultType "complete"
 * unless it has one, and _meta serverInfo. Errors are left as they are. */
void tb_mcp_modern_result(json_t *msg);

#endif /* TB_MCP_ERA_H */
