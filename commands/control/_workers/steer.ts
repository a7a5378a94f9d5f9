/**
 * The worker entry of `control steer`: a worker loads only the module graph
 * it starts with, so each command has its own entry.
 *
 * @module
 */

import { controlSteerCommand } from "../steer.ts";
import { serveCommands } from "../_worker.ts";

serveCommands({ steer: controlSteerCommand });
