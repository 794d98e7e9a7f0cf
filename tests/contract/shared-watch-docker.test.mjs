// One watch per sandbox on the docker provider (tests/contract/shared-watch.mjs).
import { sharedWatchSuite } from "./shared-watch.mjs";
import provider from "./providers/docker.mjs";

// A verb killed is tested on e2b and k8s: on a loaded engine it took four
// minutes here. 60 waits, not 200, on 20 tasks (3 each): each wait's
// first look is an archive GET, which podman serves one after another
// (about 0.4 s each here, more under load), so 200 waits' first looks
// took over 300 s under ASan beside two other suites, longer than a call
// may take (bench/results/README.md, the waits after figures on docker).
sharedWatchSuite(provider, { killed: false, waits: 60, perTask: 3 });
