// The provider contract suite on the local provider, over stdio with the
// SDK v2 client pinned to MCP 2026-07-28 (no sessions: see suite.mjs).
import { contractSuite } from "./suite.mjs";
import local from "./providers/local.mjs";

contractSuite(local, { transport: "stdio", client: "v2-modern" });
