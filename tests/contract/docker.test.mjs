// The provider contract suite on the docker provider, against a real engine.
import { contractSuite } from "./suite.mjs";
import docker from "./providers/docker.mjs";

contractSuite(docker);
