// The provider contract suite on the k8s provider with kind sandbox
// (agent-sandbox v1beta1 Sandboxes), against the fake apiserver's small
// Sandbox controller. The per-sandbox task limit is left to k8s.test.mjs.
import { contractSuite } from "./suite.mjs";
import { k8sProvider } from "./providers/k8s.mjs";

contractSuite(k8sProvider({ kind: "sandbox" }), { limitElsewhere: true });
