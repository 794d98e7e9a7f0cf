// Whose sandbox on the local provider (tests/http/tenancy-suite.mjs).
import { tenancySuite } from "./tenancy-suite.mjs";
import provider from "../contract/providers/local.mjs";

tenancySuite(provider);
