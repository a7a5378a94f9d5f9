/**
 * The worker entry of `control contract`: a worker loads only the module graph
 * it starts with, so each command has its own entry.
 *
 * @module
 */

import { controlContractCommand } from "../contract.ts";
import { serveCommands } from "../_worker.ts";

serveCommands({ contract: controlContractCommand });
