// The provider contract suite on the docker provider, over Streamable HTTP
// with the SDK v2 client pinned to MCP 2026-07-28: no sessions (see suite.mjs).
import { contractSuite } from "./suite.mjs";
import docker from "./providers/docker.mjs";

contractSuite(docker, { transport: "http", client: "v2-modern", limitElsewhere: true });
