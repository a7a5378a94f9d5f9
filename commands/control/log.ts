/**
 * `prompt_runner control log`: the audit log of a run's commands.
 *
 * @module
 */

import type { LogEntry } from "../../lib/control/log_entry.ts";
import {
  paint,
  terminalSafe,
  terminalSafeData,
} from "../../lib/render/ansi.ts";
import type { CommandContext } from "../_context.ts";
import { type ControlInput, declareControl } from "./_declare.ts";
import { withStopSignals } from "./_signals.ts";

const OUTCOME_STYLE = {
  applied: "green",
  accepted: "cyan",
  rejected: "red",
  received: "dim",
} as const;

/**
 * Formats one log entry as a human line. Params, reasons and authors are
 * anyone's text: they are made terminal-safe before they are styled.
 */
export function formatLogEntry(untrusted: LogEntry): string {
  const entry = terminalSafeData(untrusted);
  const style = OUTCOME_STYLE[entry.outcome] ?? "dim";
  const where = entry.prompt_id
    ? ` on ${entry.prompt_id}/${entry.attempt ?? "-"}`
    : "";
  const reason = entry.reason ? ` — ${entry.reason}` : "";
  return `${entry.at}  ${
    paint(entry.outcome.padEnd(8), style)
  }  ${entry.command} ${JSON.stringify(entry.params)}  ${
    paint(`by ${entry.author ?? "?"}${where}${reason}`, "dim")
  }`;
}

async function showLog(
  context: CommandContext,
  input: ControlInput<undefined>,
): Promise<number> {
  const values = input.values;
  const { runAt } = await import("./_run_at.ts");
  const { followLog, log } = await import("../../lib/control/read_log.ts");
  await using run = await runAt(input);
  const ref = run.ref;
  const print = async (entry: LogEntry): Promise<void> => {
    if (values.json) await context.stdout.json(entry);
    else {
      const line = formatLogEntry(entry) + "\n";
      await context.stdout.write(terminalSafe(line, { style: context.color }));
    }
  };
  if (!values.follow) {
    for (const entry of await log(ref)) await print(entry);
    return 0;
  }
  return await withStopSignals(async (signal) => {
    for await (const entry of followLog(ref, { signal })) await print(entry);
    return 0;
  });
}

/** `control log`. */
export const log = declareControl({
  about: `Usage: prompt_runner control log [TARGET] [options]

Prints every command sent to a run, with its outcome: applied, accepted
(a steer waiting for its lane), rejected (with the reason) or received.
TARGET is a workspace id, a packet directory or a state root (default: the
current directory, else the workspace related to it).`,
  flags: {
    follow: {
      type: "boolean",
      help: "Keep printing new entries until the run ends",
    },
    json: { type: "boolean", help: "Print entries as NDJSON" },
  },
  footer: `Exit codes:
  0 ok   2 usage error   3 packet or run not found
  5 (--follow) the runner is gone without finishing the run`,
  target: "location",
  writes: "nothing",
  run: showLog,
});
