// The provider contract suite on the docker provider, against a real engine
// that has no init binary: the plugin's init "auto" makes sandboxes without
// one, and every task rule still holds there. Its instance says
// "supervisor": "python3": the run that keeps the portable supervisor
// covered on docker (docker.test.mjs runs the default, the static copy).
// The 128-task limit is left to docker.test.mjs on this engine and to
// e2b-modern.test.mjs with python3: 128 starts take minutes here.
import { contractSuite } from "./suite.mjs";
import { dockerProvider } from "./providers/docker.mjs";

contractSuite(dockerProvider({ noInit: true, supervisor: "python3" }), { interactiveElsewhere: true, limitElsewhere: true });
