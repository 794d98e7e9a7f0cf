// The provider contract suite on the k8s provider with kind sandbox
// (agent-sandbox v1beta1 Sandboxes), against the fake apiserver's small
// Sandbox controller. The per-sandbox task limit is left to k8s.test.mjs.
// Its instance says "supervisor": "python3": the run that keeps the
// portable supervisor covered on k8s (k8s.test.mjs runs the default, the
// static copy; k8s-nopython.test.mjs an image without python3).
import { contractSuite } from "./suite.mjs";
import { k8sProvider } from "./providers/k8s.mjs";

contractSuite(k8sProvider({ kind: "sandbox", supervisor: "python3" }), { limitElsewhere: true });
