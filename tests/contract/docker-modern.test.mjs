// The provider contract suite on the docker provider, against a real
// engine, over stdio with the SDK v2 client pinned to MCP 2026-07-28.
import { contractSuite } from "./suite.mjs";
import docker from "./providers/docker.mjs";

contractSuite(docker, { transport: "stdio", client: "v2-modern", limitElsewhere: true });
