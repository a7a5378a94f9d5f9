/**
 * `prompt_runner control log`: the audit log of a run's commands.
 *
 * @module
 */

import type { LogEntry } from "../../lib/control/log_entry.ts";
import { UsageError } from "../../lib/shared/errors.ts";
import {
  paint,
  terminalSafe,
  terminalSafeData,
} from "../../lib/render/ansi.ts";
import type { CommandContext } from "../_context.ts";
import {
  type ControlInput,
  declareControl,
  type FlagValues,
} from "./_declare.ts";
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

/** `--verify` takes no `--follow`: checked before any file is read. */
function prepare({ values }: { values: FlagValues }): undefined {
  if (values.verify && values.follow) {
    throw new UsageError("--verify checks the log once: it takes no --follow", {
      hint: "Run 'prompt_runner control log --help'",
    });
  }
}

/** `--verify`: the state root's audit trail, checked on its files. */
async function verify(
  context: CommandContext,
  input: ControlInput<undefined>,
): Promise<number> {
  if (input.fleet !== null) {
    throw new UsageError(
      "--verify checks a state root's files: it takes no fleet TARGET",
      {
        hint:
          "Run 'prompt_runner control log --verify' on the run's machine, with its packet, state root or workspace id",
      },
    );
  }
  const { verifyLog } = await import("../../lib/control/verify_log.ts");
  const { printVerification } = await import("./_verify_report.ts");
  const found = await verifyLog(input.location.state_root);
  return await printVerification(context, found, input.values.json === true);
}

async function showLog(
  context: CommandContext,
  input: ControlInput<undefined>,
): Promise<number> {
  const values = input.values;
  if (values.verify) return await verify(context, input);
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
current directory, else the workspace related to it).

With --verify, checks the state root's audit trail instead: every line of
control/log.jsonl and amendments/<prompt>.jsonl carries prev, the SHA-256 of
the line before it (the first line's is of its run id); every receipt in
control/outcomes/ must have its line in the log, and every amendment must be
in the log. It names the first line that does not hold: edited, removed or
reordered. A line cut short by a crash is reported as torn, a note: the
trail still holds.`,
  flags: {
    follow: {
      type: "boolean",
      help: "Keep printing new entries until the run ends",
    },
    verify: {
      type: "boolean",
      help: "Check the audit trail's hash chains, receipts and\n" +
        "amendments instead; exit 1 when a line does not hold",
    },
    json: { type: "boolean", help: "Print entries as NDJSON" },
  },
  footer: `Exit codes:
  0 ok (--verify: the trail holds)   1 (--verify) a line does not hold
  2 usage error   3 packet, run or state root not found
  5 (--follow) the runner is gone without finishing the run`,
  target: "location",
  writes: "nothing",
  prepare,
  run: showLog,
});
