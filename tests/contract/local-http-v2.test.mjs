// The provider contract suite on the local provider, over Streamable HTTP
// with the SDK v2 client (legacy era).
import { contractSuite } from "./suite.mjs";
import local from "./providers/local.mjs";

contractSuite(local, { transport: "http", client: "v2" });
