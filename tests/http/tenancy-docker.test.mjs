// Whose sandbox on the docker provider (tests/http/tenancy-suite.mjs).
import { tenancySuite } from "./tenancy-suite.mjs";
import provider from "../contract/providers/docker.mjs";

tenancySuite(provider);
