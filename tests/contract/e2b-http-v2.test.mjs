// The provider contract suite on the e2b provider, against the fake, over
// Streamable HTTP with the SDK v2 client (legacy era).
import { contractSuite } from "./suite.mjs";
import e2b from "./providers/e2b.mjs";

contractSuite(e2b, { transport: "http", client: "v2" });
