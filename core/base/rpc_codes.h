/* JSON-RPC 2.0 error codes, for every layer that answers with one. */
#ifndef TB_RPC_CODES_H
#define TB_RPC_CODES_H

enum tb_rpc_code {
	TB_RPC_PARSE_ERROR = -32700,
	TB_RPC_INVALID_REQUEST = -32600,
	TB_RPC_METHOD_NOT_FOUND = -32601,
	TB_RPC_INVALID_PARAMS = -32602,
	TB_RPC_INTERNAL_ERROR = -32603,
	/* MCP 2026-07-28: */
	TB_RPC_HEADER_MISMATCH = -32020,
	TB_RPC_MISSING_CAPABILITY = -32021,
	TB_RPC_UNSUPPORTED_VERSION = -32022,
	/* Refused for want of room (the descriptor budget): retry later.
	 * HTTP answers it with 503. */
	TB_RPC_SERVER_BUSY = -32011,
};

#endif /* TB_RPC_CODES_H */
