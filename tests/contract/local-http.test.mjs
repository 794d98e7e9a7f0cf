// The provider contract suite on the local provider, over Streamable HTTP
// with the SDK v1 client.
import { contractSuite } from "./suite.mjs";
import local from "./providers/local.mjs";

contractSuite(local, { transport: "http", client: "v1" });
