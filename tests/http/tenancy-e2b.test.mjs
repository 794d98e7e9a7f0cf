// Whose sandbox on the e2b provider (tests/http/tenancy-suite.mjs).
import { tenancySuite } from "./tenancy-suite.mjs";
import provider from "../contract/providers/e2b.mjs";

tenancySuite(provider);
