/**
 * The report's prompt lines: one per prompt of the packet, with its status,
 * its attempts' modes and its last verification. A state root's come from
 * its packet and `state.json`; a fleet run's from what the fleet knows.
 *
 * @module
 */

import { paint, stripAnsi, terminalSafe } from "../../lib/render/mod.ts";
import type {
  StateFile,
  StatusRollup,
  VerifierCounts,
} from "../../lib/status/mod.ts";

/** One prompt, where it stands. */
export interface PromptRow {
  /** Its id. */
  id: string;
  /** Its name (`null`: not known). */
  name: string | null;
  /** Where it stands (`null`: not run). */
  status: string | null;
  /** Whether its status is the rollup's run's. */
  this_run: boolean;
  /** The modes of its attempts in the run that last touched it. */
  attempts: string[];
  /** Its last verification, counted (`null`: none). */
  verifier: VerifierCounts | null;
}

/** Each prompt of a packet, where `state.json` says it stands. */
export function stateRows(
  prompts: readonly { id: string; name: string }[],
  state: StateFile,
  runId: string | null,
): PromptRow[] {
  return prompts.map((prompt) => {
    const entry = state.prompts[prompt.id];
    const report = entry?.last_verifier ?? null;
    const count = (status: string) =>
      report?.items.filter((item) => item.status === status).length ?? 0;
    return {
      id: prompt.id,
      name: prompt.name,
      status: entry?.status ?? null,
      this_run: entry !== undefined && entry.run_id === runId,
      attempts: (entry?.attempts ?? []).filter((a) =>
        a.run_id === entry?.run_id
      ).map((a) => a.mode),
      verifier: report === null ? null : {
        passed: report.passed,
        items: report.items.length,
        failures: count("fail"),
        faults: count("fault"),
      },
    };
  });
}

function verifierText(verifier: PromptRow["verifier"]): string {
  if (verifier === null) return "-";
  const passed = verifier.items - verifier.failures - verifier.faults;
  const verdict = verifier.passed ? "pass" : verifier.faults ? "fault" : "fail";
  return `${verdict} ${passed}/${verifier.items}`;
}

function statusStyle(status: string): "green" | "red" | "yellow" | "dim" {
  if (status === "completed") return "green";
  if (
    status === "running" || status === "retry_scheduled" ||
    status === "repairing"
  ) {
    return "yellow";
  }
  if (status === "not run") return "dim";
  return "red";
}

function pad(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - stripAnsi(text).length));
}

/** The rows as the report's lines (names made terminal-safe). */
export function promptLines(
  rows: readonly PromptRow[],
  rollup: StatusRollup,
): string[] {
  return rows.map((row) => {
    // A prompt left running by a runner that is gone is not running.
    const status = rollup.run.status === "runner_gone" && row.this_run &&
        ["running", "retry_scheduled", "repairing"].includes(row.status ?? "")
      ? "runner gone"
      : row.status ?? "not run";
    const attempts = row.attempts.length
      ? `${row.attempts.length} attempt${
        row.attempts.length === 1 ? "" : "s"
      }: ${row.attempts.join(", ")}`
      : "";
    return `  ${row.id}  ${pad(paint(status, statusStyle(status)), 20)} ${
      pad(terminalSafe(row.name ?? ""), 28)
    } ${pad(attempts, 30)} verify: ${verifierText(row.verifier)}`.trimEnd();
  });
}
