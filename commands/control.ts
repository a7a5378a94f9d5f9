/**
 * `prompt_runner control`: watch and steer a run from another process.
 *
 * @module
 */

import { UsageError } from "../lib/shared/errors.ts";
import type { Command, CommandContext } from "./_context.ts";
import { runEntry } from "./_dispatch.ts";
import { CONTROL_COMMANDS, CONTROL_INFO } from "./control/_registry.ts";

async function control(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    await context.stderr.write(CONTROL_INFO.help);
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    await context.stdout.write(CONTROL_INFO.help);
    return 0;
  }
  const command = CONTROL_COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    throw new UsageError(`Unknown control command "${name}"`, {
      hint: `Control commands are ${
        CONTROL_COMMANDS.map((c) => c.name).join(", ")
      }; run 'prompt_runner control --help'`,
    });
  }
  // Help needs no run; everything else works confined to its run.
  return await runEntry(command, context, rest);
}

/** The `control` command. */
export const controlCommand: Command = { ...CONTROL_INFO, run: control };
