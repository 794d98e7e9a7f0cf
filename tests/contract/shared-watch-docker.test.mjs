// One watch per sandbox on the docker provider (tests/contract/shared-watch.mjs).
import { sharedWatchSuite } from "./shared-watch.mjs";
import provider from "./providers/docker.mjs";

// A verb killed is tested on e2b and k8s: on a loaded engine it took four
// minutes here. The 200 waits are on 40 tasks, 5 each: 200 starts took
// five minutes under ASan on a loaded engine (e2b and k8s start 200).
sharedWatchSuite(provider, { killed: false, perTask: 5 });
