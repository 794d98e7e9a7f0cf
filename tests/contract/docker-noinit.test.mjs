// The provider contract suite on the docker provider, against a real engine
// that has no init binary: the plugin's init "auto" makes sandboxes without
// one, and every task rule still holds there.
import { contractSuite } from "./suite.mjs";
import { dockerProvider } from "./providers/docker.mjs";

contractSuite(dockerProvider({ noInit: true }), { interactiveElsewhere: true });
