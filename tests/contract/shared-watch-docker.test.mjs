// One watch per sandbox on the docker provider (tests/contract/shared-watch.mjs).
import { sharedWatchSuite } from "./shared-watch.mjs";
import provider from "./providers/docker.mjs";

sharedWatchSuite(provider);
