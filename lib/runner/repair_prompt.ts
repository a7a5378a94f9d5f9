/**
 * The repair prompt: the original task plus what the verifier found unmet.
 *
 * @module
 */

import type { VerifyReport } from "../verify/report.ts";

const OUTPUT_LINES = 40;

function indent(text: string, prefix: string): string {
  const lines = text.split("\n");
  const shown = lines.slice(0, OUTPUT_LINES).map((line) => prefix + line);
  if (lines.length > OUTPUT_LINES) {
    shown.push(
      `${prefix}[truncated: ${lines.length - OUTPUT_LINES} more lines]`,
    );
  }
  return shown.join("\n");
}

/**
 * Builds the text of a repair attempt: the prompt's body, then a
 * `## Repair Instructions` section listing the unmet verifier items and the
 * last runtime error.
 */
export function buildRepairPrompt(
  body: string,
  report: VerifyReport | null,
  lastError: string | null,
): string {
  const failures = (report?.items ?? []).filter((item) =>
    item.status !== "pass"
  );
  const blocks = failures.map((item) => {
    const lines = [`- ${item.clause}: ${item.label}`];
    if (item.repo) lines.push(`  repo: ${item.repo}`);
    if (item.resolved_path) lines.push(`  path: ${item.resolved_path}`);
    if (item.argv) lines.push(`  command: ${item.argv.join(" ")}`);
    lines.push(`  problem: ${item.reason.split("\n")[0]}`);
    if (item.output) lines.push("  output:", indent(item.output, "    "));
    return lines.join("\n");
  });
  return [
    body.trimEnd(),
    "",
    "## Repair Instructions",
    "",
    "A previous attempt at this task left the items below unmet. Continue from",
    "the current state of the workspace: fix only what is listed, and do not",
    "redo work that is already satisfied.",
    "",
    `Last runtime error: ${lastError ?? "n/a"}`,
    "",
    "Remaining verifier failures:",
    "",
    blocks.length ? blocks.join("\n") : "(none recorded)",
    "",
  ].join("\n");
}
