// The replica scenario (replica-suite.mjs) on the docker provider: three
// replicas on one container engine.
import { replicaSuite } from "./replica-suite.mjs";
import docker from "../contract/providers/docker.mjs";

replicaSuite(docker);
