/* The modern era's envelope, discover and result fields (mcp_era.h). */
#include "config.h"

#include <string.h>

#include "protocol/jsonrpc.h"
#include "protocol/mcp.h"
#include "protocol/mcp_era.h"

const char *const tb_mcp_modern_versions[] = {"2026-07-28", NULL};

static json_t *meta_of(json_t *params)
{
	return json_object_get(params, "_meta");
}

bool tb_mcp_claims(json_t *params)
{
	return json_object_get(meta_of(params), TB_META_VERSION) != NULL;
}

const char *tb_mcp_claimed_version(json_t *params)
{
	return json_string_value(
	    json_object_get(meta_of(params), TB_META_VERSION));
}

bool tb_mcp_claims_partly(json_t *params)
{
	json_t *meta = meta_of(params);

	return !json_object_get(meta, TB_META_VERSION) &&
	       (json_object_get(meta, TB_META_CAPABILITIES) ||
	        json_object_get(meta, "io.modelcontextprotocol/clientInfo"));
}

static bool modern_version(const char *v)
{
	for (int i = 0; tb_mcp_modern_versions[i]; i++)
		if (strcmp(v, tb_mcp_modern_versions[i]) == 0)
			return true;
	return false;
}

json_t *tb_mcp_unsupported_version(json_t *id, const char *requested)
{
	json_t *supported = json_array();

	for (int i = 0; supported && tb_mcp_modern_versions[i]; i++)
		json_array_append_new(supported,
		                      json_string(tb_mcp_modern_versions[i]));
	return tb_rpc_error_data(
	    tb_rpc_error(id, TB_RPC_UNSUPPORTED_VERSION,
	                 "Unsupported protocol version: %.64s", requested),
	    json_pack("{s:o?,s:s}", "supported", supported, "requested",
	              requested));
}

json_t *tb_mcp_envelope_error(json_t *id, json_t *params)
{
	json_t *meta = meta_of(params);
	json_t *version = json_object_get(meta, TB_META_VERSION);
	json_t *caps = json_object_get(meta, TB_META_CAPABILITIES);

	if (!json_is_object(meta) || !version)
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: the _meta envelope needs "
		                    "'" TB_META_VERSION "'");
	if (!json_is_string(version) || json_string_length(version) == 0)
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid params: _meta '" TB_META_VERSION
		                    "' must be a version string");
	if (!modern_version(json_string_value(version)))
		return tb_mcp_unsupported_version(id,
		                                  json_string_value(version));
	if (!caps)
		return tb_rpc_error(id, TB_RPC_INVALID_PARAMS,
		                    "Invalid _meta envelope for protocol "
		                    "revision %s: " TB_META_CAPABILITIES
		                    ": missing",
		                    json_string_value(version));
	if (!json_is_object(caps))
		return tb_rpc_error(
		    id, TB_RPC_INVALID_PARAMS,
		    "Invalid _meta envelope: " TB_META_CAPABILITIES
		    " must be an object");
	return NULL;
}

bool tb_mcp_declares(json_t *params, const char *name)
{
	json_t *caps = json_object_get(meta_of(params), TB_META_CAPABILITIES);

	return json_is_object(
	    json_object_get(json_object_get(caps, "extensions"), name));
}

static json_t *server_info(void)
{
	return json_pack("{s:s,s:s,s:s}", "name", PACKAGE_NAME, "title",
	                 "taskbox", "version", PACKAGE_VERSION);
}

void tb_mcp_cacheable(json_t *result, long ttl_ms)
{
	json_object_set_new(result, "ttlMs", json_integer(ttl_ms));
	json_object_set_new(result, "cacheScope", json_string("public"));
}

json_t *tb_mcp_discover_result(bool with_tasks)
{
	json_t *versions = json_array();

	for (int i = 0; versions && tb_mcp_modern_versions[i]; i++)
		json_array_append_new(versions,
		                      json_string(tb_mcp_modern_versions[i]));
	for (int i = 0; versions && tb_mcp_versions[i]; i++)
		json_array_append_new(versions,
		                      json_string(tb_mcp_versions[i]));
	json_t *r =
	    json_pack("{s:o?,s:{s:{s:b}}}", "supportedVersions", versions,
	              "capabilities", "tools", "listChanged", 0);
	if (r && with_tasks)
		json_object_set_new(json_object_get(r, "capabilities"),
		                    "extensions",
		                    json_pack("{s:{}}", TB_EXT_TASKS));
	if (r)
		tb_mcp_cacheable(r, TB_MCP_TTL_MS);
	return r;
}

void tb_mcp_modern_result(json_t *msg)
{
	json_t *result = json_object_get(msg, "result");
	json_t *meta;

	if (!json_is_object(result))
		return;
	if (!json_object_get(result, "resultType"))
		json_object_set_new(result, "resultType",
		                    json_string("complete"));
	meta = json_object_get(result, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, TB_META_SERVER_INFO, server_info());
}
