// The provider contract suite on the e2b provider, against the fake, over
// stdio with the SDK v2 client in "auto" mode (it probes with
// server/discover, then speaks MCP 2026-07-28). Its instance says
// "supervisor": "python3": the run that keeps the portable supervisor
// covered on e2b (e2b.test.mjs runs the default, the static copy).
import { contractSuite } from "./suite.mjs";
import { e2bProvider } from "./providers/e2b.mjs";

contractSuite(e2bProvider({ supervisor: "python3" }), { transport: "stdio", client: "v2-auto" });
