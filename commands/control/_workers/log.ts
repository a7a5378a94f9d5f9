/**
 * The worker entry of `control log`: a worker loads only the module graph
 * it starts with, so each command has its own entry.
 *
 * @module
 */

import { controlLogCommand } from "../log.ts";
import { serveCommands } from "../_worker.ts";

serveCommands({ log: controlLogCommand });
