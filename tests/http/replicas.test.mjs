// The replica scenario (replica-suite.mjs) on the local provider (one
// state directory) and on e2b (one fake); docker's is
// tests/http/replicas-docker.test.mjs.
import { replicaSuite } from "./replica-suite.mjs";
import local from "../contract/providers/local.mjs";
import e2b from "../contract/providers/e2b.mjs";

replicaSuite(local);
replicaSuite(e2b);
