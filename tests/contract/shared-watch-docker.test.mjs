// One watch per sandbox on the docker provider (tests/contract/shared-watch.mjs).
import { sharedWatchSuite } from "./shared-watch.mjs";
import provider from "./providers/docker.mjs";

// A verb killed is tested on e2b and k8s: on a loaded engine it took four
// minutes here.
sharedWatchSuite(provider, { killed: false });
