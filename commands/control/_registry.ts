/**
 * The control subcommands, in help order: each is named and summarised
 * here, and declared in its module (`_declare.ts`), imported only when it
 * runs or its help is asked for.
 *
 * @module
 */

import type { Command, CommandEntry, CommandInfo } from "../_context.ts";
import { importCommand } from "../_dispatch.ts";
import { type ControlDeclaration, declaredHelp } from "./_declare.ts";

/**
 * A control command as the registry lists it: its name and summary, and the
 * module that declares it (by the name it exports), loaded only when the
 * command runs or its help is asked for.
 */
function declared(name: string, summary: string, path: string): CommandEntry {
  const load = async (): Promise<Command> => {
    const module = await importCommand<Record<string, unknown>>(path);
    const declaration = module[name] as ControlDeclaration;
    const help = declaredHelp(declaration);
    return {
      name,
      summary,
      help,
      run: async (context, argv) => {
        const { runConfined } = await importCommand<
          typeof import("./_confined.ts")
        >("./control/_confined.ts");
        const url = new URL(path, new URL("../", import.meta.url)).href;
        return await runConfined(
          name,
          declaration,
          url,
          context,
          argv,
          () => help,
        );
      },
    };
  };
  return { name, summary, help: async () => (await load()).help, load };
}

/** The control subcommands, in help order. */
export const CONTROL_COMMANDS: readonly CommandEntry[] = [
  declared(
    "status",
    "Show a run's live state (the snapshot)",
    "./control/status.ts",
  ),
  declared(
    "events",
    "Replay and follow a run's events until it finishes",
    "./control/events.ts",
  ),
  declared(
    "log",
    "Show the audit log of commands sent to a run, or verify its chain",
    "./control/log.ts",
  ),
  declared(
    "view",
    "Change a live run's view (log mode, tool output, thinking, diff)",
    "./control/view.ts",
  ),
  declared("steer", "Steer a live run's agent", "./control/steer.ts"),
  declared(
    "contract",
    "Show a prompt's contract, its amendments and what is enforced",
    "./control/contract.ts",
  ),
  declared(
    "amend",
    "Add a requirement to a prompt's contract (needs --reason)",
    "./control/amend.ts",
  ),
  declared(
    "relax",
    "Drop a clause of a prompt's contract (needs --reason and --confirm)",
    "./control/amend.ts",
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

view, steer, amend and relax take --wait [--timeout S]: they wait until the
request's outcome is final and exit by it.

Exit codes:
  0 ok   2 usage error   3 not found   4 refused by state (the run is not
  running; with --wait, the request was rejected)   5 a followed run ended
  without run_finished (with --wait: the run ended before the request was
  applied)   124 a --wait --timeout passed
`;
}

/** `control` itself. */
export const CONTROL_INFO: CommandInfo = {
  name: "control",
  summary: "Watch and steer a live run from another process",
  help: controlHelp(),
};
