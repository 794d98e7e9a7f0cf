// The provider contract suite on the docker provider, against a real
// engine, over Streamable HTTP with the SDK v1 client.
import { contractSuite } from "./suite.mjs";
import docker from "./providers/docker.mjs";

contractSuite(docker, { transport: "http", client: "v1", limitElsewhere: true });
