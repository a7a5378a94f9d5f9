/**
 * `prompt_runner control`: watch and steer a run from another process.
 *
 * @module
 */

import { UsageError } from "../lib/shared/mod.ts";
import type { Command, CommandContext } from "./_context.ts";
import { controlAmendCommand, controlRelaxCommand } from "./control/amend.ts";
import { controlContractCommand } from "./control/contract.ts";
import { controlEventsCommand } from "./control/events.ts";
import { controlLogCommand } from "./control/log.ts";
import { controlStatusCommand } from "./control/status.ts";
import { controlSteerCommand } from "./control/steer.ts";
import { controlViewCommand } from "./control/view.ts";

/** The control subcommands, in help order. */
export const CONTROL_COMMANDS: readonly Command[] = [
  controlStatusCommand,
  controlEventsCommand,
  controlLogCommand,
  controlViewCommand,
  controlSteerCommand,
  controlContractCommand,
  controlAmendCommand,
  controlRelaxCommand,
];

function help(): string {
  const width = Math.max(...CONTROL_COMMANDS.map((c) => c.name.length));
  return `Usage: prompt_runner control COMMAND [TARGET] [options]

Watches and steers a run from another terminal or process, through files in
the run's state root: reads never touch the run, and every command sent is
recorded in the run's audit log, refused ones included. TARGET is a packet
directory or a state root (default: the current directory).

Commands:
${
    CONTROL_COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join(
      "\n",
    )
  }

Run 'prompt_runner control COMMAND --help' for a command's options.

Exit codes:
  0 ok   2 usage error   3 not found   4 refused by state (the run is not
  running)   5 a followed run ended without run_finished
`;
}

async function control(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    await context.stderr.write(help());
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    await context.stdout.write(help());
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
  return await command.run(context, rest);
}

/** The `control` command. */
export const controlCommand: Command = {
  name: "control",
  summary: "Watch and steer a live run from another process",
  help: help(),
  run: control,
};
