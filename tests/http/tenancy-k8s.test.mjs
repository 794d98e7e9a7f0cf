// Whose sandbox on the k8s provider (tests/http/tenancy-suite.mjs).
import { tenancySuite } from "./tenancy-suite.mjs";
import provider from "../contract/providers/k8s.mjs";

tenancySuite(provider);
