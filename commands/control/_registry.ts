/**
 * The control subcommands, in help order: each is described here and its
 * module imported only when it runs.
 *
 * @module
 */

import type { CommandEntry, CommandInfo } from "../_context.ts";
import { describedEntry, importCommand } from "../_dispatch.ts";
import {
  CONTROL_AMEND_INFO,
  CONTROL_CONTRACT_INFO,
  CONTROL_LOG_INFO,
  CONTROL_RELAX_INFO,
  CONTROL_STATUS_INFO,
  CONTROL_VIEW_INFO,
} from "./_help.ts";

/** A command whose help is kept beside its code: asking for it loads it. */
function loaded(
  name: string,
  summary: string,
  load: CommandEntry["load"],
): CommandEntry {
  return { name, summary, help: async () => (await load()).help, load };
}

/** The control subcommands, in help order. */
export const CONTROL_COMMANDS: readonly CommandEntry[] = [
  describedEntry(
    CONTROL_STATUS_INFO,
    async () =>
      (await importCommand<typeof import("./status.ts")>("./control/status.ts"))
        .controlStatusCommand,
  ),
  loaded(
    "events",
    "Replay and follow a run's events until it finishes",
    async () =>
      (await importCommand<typeof import("./events.ts")>("./control/events.ts"))
        .controlEventsCommand,
  ),
  describedEntry(
    CONTROL_LOG_INFO,
    async () =>
      (await importCommand<typeof import("./log.ts")>("./control/log.ts"))
        .controlLogCommand,
  ),
  describedEntry(
    CONTROL_VIEW_INFO,
    async () =>
      (await importCommand<typeof import("./view.ts")>("./control/view.ts"))
        .controlViewCommand,
  ),
  loaded(
    "steer",
    "Steer a live run's agent",
    async () =>
      (await importCommand<typeof import("./steer.ts")>("./control/steer.ts"))
        .controlSteerCommand,
  ),
  describedEntry(
    CONTROL_CONTRACT_INFO,
    async () =>
      (await importCommand<typeof import("./contract.ts")>(
        "./control/contract.ts",
      )).controlContractCommand,
  ),
  describedEntry(
    CONTROL_AMEND_INFO,
    async () =>
      (await importCommand<typeof import("./amend.ts")>("./control/amend.ts"))
        .controlAmendCommand,
  ),
  describedEntry(
    CONTROL_RELAX_INFO,
    async () =>
      (await importCommand<typeof import("./amend.ts")>("./control/amend.ts"))
        .controlRelaxCommand,
  ),
];

function controlHelp(): string {
  const width = Math.max(...CONTROL_COMMANDS.map((c) => c.name.length));
  return `Usage: prompt_runner control COMMAND [TARGET] [options]

Watches and steers a run from another terminal or process, through files in
the run's state root: reads never touch the run, and every command sent is
recorded in the run's audit log, refused ones included. TARGET is a
workspace id, a packet directory or a state root (default: the current
directory, else the workspace related to it); --workspace FILE [--packet
DIR] names a workspace by its file instead.

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

/** `control` itself. */
export const CONTROL_INFO: CommandInfo = {
  name: "control",
  summary: "Watch and steer a live run from another process",
  help: controlHelp(),
};
