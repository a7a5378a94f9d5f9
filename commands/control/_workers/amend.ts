/**
 * The worker entry of `control amend` and `control relax`, which share
 * their module: a worker loads only the module graph it starts with, so
 * each command has its own entry.
 *
 * @module
 */

import { controlAmendCommand, controlRelaxCommand } from "../amend.ts";
import { serveCommands } from "../_worker.ts";

serveCommands({ amend: controlAmendCommand, relax: controlRelaxCommand });
