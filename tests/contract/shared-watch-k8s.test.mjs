// One watch per sandbox on the k8s provider (tests/contract/shared-watch.mjs).
import { sharedWatchSuite } from "./shared-watch.mjs";
import provider from "./providers/k8s.mjs";

sharedWatchSuite(provider);
