/**
 * The worker entry of `control events`: a worker loads only the module graph
 * it starts with, so each command has its own entry.
 *
 * @module
 */

import { controlEventsCommand } from "../events.ts";
import { serveCommands } from "../_worker.ts";

serveCommands({ events: controlEventsCommand });
