// The provider contract suite on the e2b provider, against the fake, over
// stdio with the SDK v2 client in "auto" mode (it probes with
// server/discover, then speaks MCP 2026-07-28).
import { contractSuite } from "./suite.mjs";
import e2b from "./providers/e2b.mjs";

contractSuite(e2b, { transport: "stdio", client: "v2-auto" });
