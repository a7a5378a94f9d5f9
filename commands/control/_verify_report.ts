/**
 * `control log --verify`: what holds of a state root's audit trail, or the
 * first line that does not, as human lines or NDJSON.
 *
 * @module
 */

import type {
  LogFinding,
  LogVerification,
} from "../../lib/control/verify_log.ts";
import { paint, terminalSafe } from "../../lib/render/ansi.ts";
import type { CommandContext } from "../_context.ts";

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A finding as one human line (its texts are anyone's: made safe). */
export function findingLine(finding: LogFinding): string {
  const where = `${finding.file}${
    finding.line === null ? "" : ` line ${finding.line}`
  }`;
  return terminalSafe(`${where}: ${finding.kind}: ${finding.message}`);
}

/** The human report: each file, the cross-checks, the findings, the verdict. */
export function verificationText(found: LogVerification): string[] {
  const lines: string[] = [];
  for (const file of found.files) {
    lines.push(
      `${terminalSafe(file.file)}: ${plural(file.lines, "line")}, ${
        file.holds
          ? paint("the chain holds", "green")
          : paint("the chain does not hold", "red")
      }`,
    );
  }
  if (found.files.length === 0) {
    lines.push("control/log.jsonl: none yet, nothing to chain");
  }
  lines.push(
    `control/outcomes: ${
      plural(found.receipts, "receipt")
    } checked against the log`,
    `amendments: ${
      plural(found.amendments, "amendment")
    } checked against the log`,
  );
  for (const problem of found.problems) {
    lines.push(paint(findingLine(problem), "red"));
  }
  for (const note of found.notes) {
    lines.push(paint(`note: ${findingLine(note)}`, "yellow"));
  }
  const first = found.problems[0];
  lines.push(
    first === undefined ? paint("the audit trail holds", "green") : paint(
      `the audit trail does not hold: ${
        plural(found.problems.length, "problem")
      }, the first at ${terminalSafe(first.file)}${
        first.line === null ? "" : ` line ${first.line}`
      } (${first.kind})`,
      "red",
    ),
  );
  return lines;
}

/**
 * Prints a verification: human lines, or with `json` one NDJSON object per
 * finding (`type: "finding"`) and a last one with the verdict (`type:
 * "verdict"`).
 *
 * @returns The exit code: 0 when the trail holds, 1 when it does not.
 */
export async function printVerification(
  context: CommandContext,
  found: LogVerification,
  json: boolean,
): Promise<number> {
  if (json) {
    for (const finding of [...found.problems, ...found.notes]) {
      await context.stdout.json({ v: 1, type: "finding", ...finding });
    }
    await context.stdout.json({
      v: 1,
      type: "verdict",
      state_root: found.state_root,
      holds: found.holds,
      files: found.files,
      receipts: found.receipts,
      amendments: found.amendments,
      problems: found.problems.length,
      notes: found.notes.length,
    });
  } else {
    for (const line of verificationText(found)) {
      await context.stdout.write(
        terminalSafe(line + "\n", { style: context.color }),
      );
    }
  }
  return found.holds ? 0 : 1;
}
