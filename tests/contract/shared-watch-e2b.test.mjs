// One watch per sandbox on the e2b provider (tests/contract/shared-watch.mjs).
import { sharedWatchSuite } from "./shared-watch.mjs";
import provider from "./providers/e2b.mjs";

sharedWatchSuite(provider);
