// The provider contract suite on the docker provider, against a real
// engine, over Streamable HTTP with the SDK v2 client (legacy era).
import { contractSuite } from "./suite.mjs";
import docker from "./providers/docker.mjs";

contractSuite(docker, { transport: "http", client: "v2", limitElsewhere: true });
