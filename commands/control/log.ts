/**
 * `prompt_runner control log`: the audit log of a run's commands.
 *
 * @module
 */

import type { LogEntry } from "../../lib/control/log_entry.ts";
import { followLog, log } from "../../lib/control/read_log.ts";
import {
  paint,
  terminalSafe,
  terminalSafeData,
} from "../../lib/render/ansi.ts";
import { CONTROL_LOG_INFO } from "./_help.ts";
import type { Command, CommandContext } from "../_context.ts";
import { withStopSignals } from "./_signals.ts";
import { parseRunCommand } from "./_target.ts";

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

async function logCommand(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const parsed = await parseRunCommand(
    context,
    "log",
    CONTROL_LOG_INFO.help,
    argv,
    {
      follow: { type: "boolean" },
      json: { type: "boolean" },
    },
  );
  if (parsed === null) return 0;
  const { args, ref } = parsed;
  const print = async (entry: LogEntry): Promise<void> => {
    if (args.values.json) await context.stdout.json(entry);
    else {
      const line = formatLogEntry(entry) + "\n";
      await context.stdout.write(terminalSafe(line, { style: context.color }));
    }
  };
  if (!args.values.follow) {
    for (const entry of await log(ref)) await print(entry);
    return 0;
  }
  return await withStopSignals(async (signal) => {
    for await (const entry of followLog(ref, { signal })) await print(entry);
    return 0;
  });
}

/** The `control log` command. */
export const controlLogCommand: Command = {
  ...CONTROL_LOG_INFO,
  run: logCommand,
};
