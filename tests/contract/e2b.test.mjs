// The provider contract suite on the e2b provider, against the fake.
import { contractSuite } from "./suite.mjs";
import e2b from "./providers/e2b.mjs";

contractSuite(e2b);
