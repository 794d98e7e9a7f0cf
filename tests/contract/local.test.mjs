// The provider contract suite on the local provider.
import { contractSuite } from "./suite.mjs";
import local from "./providers/local.mjs";

contractSuite(local);
