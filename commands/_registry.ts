/**
 * Every top-level command, in help order.
 *
 * @module
 */

import type { Command } from "./_context.ts";
import { controlCommand } from "./control.ts";
import { runCommand } from "./run.ts";
import { statusCommand } from "./status.ts";

/** The commands `main.ts` dispatches to. */
export const COMMANDS: readonly Command[] = [
  runCommand,
  statusCommand,
  controlCommand,
];
