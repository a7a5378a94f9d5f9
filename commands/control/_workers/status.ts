/**
 * The worker entry of `control status`: a worker loads only the module graph
 * it starts with, so each command has its own entry.
 *
 * @module
 */

import { controlStatusCommand } from "../status.ts";
import { serveCommands } from "../_worker.ts";

serveCommands({ status: controlStatusCommand });
