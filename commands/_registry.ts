/**
 * Every top-level command, in help order: each is described here and its
 * module imported only when it runs, so `--help` and a quick read load
 * little more than what they use.
 *
 * @module
 */

import type { CommandEntry } from "./_context.ts";
import { describedEntry } from "./_dispatch.ts";
import { RUN_INFO, STATUS_INFO } from "./_help.ts";
import { CONTROL_INFO } from "./control/_registry.ts";

/** The commands `main.ts` dispatches to. */
export const COMMANDS: readonly CommandEntry[] = [
  describedEntry(RUN_INFO, async () => (await import("./run.ts")).runCommand),
  describedEntry(
    STATUS_INFO,
    async () => (await import("./status.ts")).statusCommand,
  ),
  describedEntry(
    CONTROL_INFO,
    async () => (await import("./control.ts")).controlCommand,
  ),
];
