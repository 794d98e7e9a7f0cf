// The provider contract suite on the local provider, over Streamable HTTP
// with the SDK v2 client in "auto" mode (server/discover, then MCP
// 2026-07-28): no sessions (see suite.mjs).
import { contractSuite } from "./suite.mjs";
import local from "./providers/local.mjs";

contractSuite(local, { transport: "http", client: "v2-auto" });
