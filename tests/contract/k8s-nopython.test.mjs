// The provider contract suite on the k8s provider (kind pod) with an image
// that has no python3 (debian:12-slim in the fake apiserver: its root
// without python3). The server finds python3 missing at the first verb,
// copies its static native supervisor into the sandbox (.taskbox/bin) and
// runs every verb with it; the whole contract holds, but for the two
// interactive tests whose command is itself a python3 program.
import { contractSuite } from "./suite.mjs";
import { k8sProvider } from "./providers/k8s.mjs";

contractSuite(k8sProvider({ image: "debian:12-slim" }));
