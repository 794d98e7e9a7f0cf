// The provider contract suite on the k8s provider (kind pod: bare Pods),
// against the fake apiserver.
import { contractSuite } from "./suite.mjs";
import k8s from "./providers/k8s.mjs";

contractSuite(k8s);
