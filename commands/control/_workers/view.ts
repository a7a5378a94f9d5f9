/**
 * The worker entry of `control view`: a worker loads only the module graph
 * it starts with, so each command has its own entry.
 *
 * @module
 */

import { controlViewCommand } from "../view.ts";
import { serveCommands } from "../_worker.ts";

serveCommands({ view: controlViewCommand });
