// The provider contract suite on the e2b provider, over Streamable HTTP
// with the SDK v2 client pinned to MCP 2026-07-28: no sessions (see suite.mjs).
import { contractSuite } from "./suite.mjs";
import e2b from "./providers/e2b.mjs";

contractSuite(e2b, { transport: "http", client: "v2-modern" });
