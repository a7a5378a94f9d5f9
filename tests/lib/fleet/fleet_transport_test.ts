import { clientContractTests } from "../../_helpers/client_contract.ts";
import { fleetHarness } from "../../_helpers/fleet.ts";

clientContractTests("fleet", fleetHarness);
