/**
 * The status rollup in words: one quiet report, a line per part, and the
 * hint that continues a run whose runner is gone or that was interrupted.
 * Pure; every string in it is made terminal-safe by the caller.
 *
 * @module
 */

import { paint, type Style } from "../../lib/render/ansi.ts";
import { duration } from "../../lib/render/duration.ts";
import {
  attentionText,
  spendingText,
  type StatusRollup,
} from "../../lib/status/mod.ts";

/** The human words for a run's status (DESIGN §10). */
export const RUN_WORDS: Record<StatusRollup["run"]["status"], string> = {
  never_run: "never run",
  running: "running",
  completed: "completed",
  failed: "failed",
  interrupted: "interrupted",
  runner_gone: "runner gone",
};

const WORD_STYLE: Record<StatusRollup["run"]["status"], Style> = {
  never_run: "dim",
  running: "yellow",
  completed: "green",
  failed: "red",
  interrupted: "red",
  runner_gone: "red",
};

/** Quotes a shell word when it needs quoting. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word)
    ? word
    : `'${word.replaceAll("'", `'\\''`)}'`;
}

function row(label: string, value: string): string {
  return `  ${paint(label.padEnd(11), "dim")} ${value}`;
}

function quote(text: string, max = 60): string {
  const one = text.replace(/\s+/g, " ").trim();
  return `"${one.length > max ? `${one.slice(0, max - 1)}…` : one}"`;
}

function runRow(r: StatusRollup): string {
  const run = r.run;
  const parts = [run.id ?? "-"];
  if (run.started_at) {
    parts.push(
      `started ${run.started_at}${
        run.started_by ? ` by ${run.started_by}` : ""
      }`,
    );
  }
  if (run.elapsed_ms !== null) {
    parts.push(
      `${run.status === "running" ? "running for" : "ran"} ${
        duration(run.elapsed_ms)
      }`,
    );
  }
  return row("run", parts.join(", "));
}

function progressRow(r: StatusRollup, packetSelection: boolean): string {
  const p = r.progress;
  const parts = [
    `${p.completed ?? "?"}/${p.selected ?? "?"} completed${
      p.failed ? `, ${p.failed} failed` : ""
    }${packetSelection ? " (of the packet's prompts)" : ""}`,
  ];
  if (p.current.id !== null) {
    parts.push(
      `${r.run.status === "running" ? "now" : "last"} ${p.current.id}${
        p.current.name ? ` ${p.current.name}` : ""
      }`,
    );
  }
  return row("progress", parts.join(" · "));
}

function verifierRows(r: StatusRollup): string[] {
  const v = r.verifier;
  if (v.passed === null) return [row("verifier", "not run for this prompt")];
  if (v.passed) return [row("verifier", paint("passed", "green"))];
  return [
    row("verifier", paint(`${v.unmet.length} unmet`, "red")),
    ...v.unmet.map((item) =>
      `${" ".repeat(16)}${item.clause} ${item.label}${
        item.status === "fault" ? " (fault)" : ""
      }: ${item.reason}`
    ),
  ];
}

function providerRow(r: StatusRollup): string {
  const p = r.provider;
  const parts = [`${p.name ?? "-"}${p.model ? ` / ${p.model}` : ""}`];
  if (p.last_event_age_ms !== null) {
    parts.push(`last event ${duration(p.last_event_age_ms)} ago`);
  }
  if (p.input_tokens !== null) {
    parts.push(
      `${p.input_tokens} in / ${p.output_tokens} out tokens${
        p.cost_usd === null ? "" : `, $${p.cost_usd.toFixed(4)}`
      }`,
    );
  }
  return row("provider", parts.join(" · "));
}

function steersRow(r: StatusRollup): string {
  const s = r.steers;
  const last = s.last;
  const text = `${s.count} delivered${
    last === null
      ? ""
      : ` · last by ${last.author ?? "unknown"} on ${
        last.prompt_id ?? "-"
      } (${last.outcome}${
        last.outcome === "rejected" && last.reason ? `: ${last.reason}` : ""
      })${last.text === null ? "" : ` ${quote(last.text)}`}`
  }`;
  return row("steers", text);
}

function amendmentsRow(r: StatusRollup): string {
  const a = r.amendments;
  const last = a.last;
  return row(
    "amendments",
    `${a.count}${
      last === null
        ? ""
        : ` · last by ${last.author} on ${last.prompt_id}: ${last.direction} ${last.clause}${
          last.operation === "add" ? "" : ` (${last.operation})`
        } ${quote(last.reason)}`
    }`,
  );
}

/** Why the run needs a person: the report's second line, in red. */
function attentionRow(r: StatusRollup): string[] {
  const a = r.attention;
  if (a === null) return [];
  return [
    row("attention", paint(`${attentionText(a)} since ${a.since}`, "red")),
    `${" ".repeat(14)}${a.detail}`,
  ];
}

/** Spend against each limit in force. */
function budgetRow(r: StatusRollup): string[] {
  if (r.budget === null) return [];
  const parts = r.budget.map((b) =>
    b.spent > b.limit ? paint(spendingText(b), "red") : spendingText(b)
  );
  return [row("budget", parts.join(" · "))];
}

function agentRow(r: StatusRollup): string {
  const s = r.service;
  if (s.agent_pid === null) return row("agent", "no agent process recorded");
  const state = s.alive === null
    ? "cannot be checked from here"
    : s.alive
    ? "alive"
    : "not running";
  return row("agent", `pid ${s.agent_pid} ${state}`);
}

function leaseRow(r: StatusRollup, fleet: FleetHearing | null): string {
  const l = r.lease;
  if (fleet !== null) return fleetLeaseRow(r, fleet);
  switch (l.state) {
    case "none":
      return row("runner", "no run lock (no runner holds the state root)");
    case "alive":
      return row("runner", `pid ${l.pid} on ${l.host}, alive`);
    case "gone":
      return row(
        "runner",
        paint(`pid ${l.pid} on ${l.host}, gone`, "red"),
      );
    case "other_host":
      return row(
        "runner",
        `pid ${l.pid} on another host, ${l.host} (cannot be checked from here)`,
      );
  }
}

/** A fleet run's runner: alive while the fleet hears from it. */
function fleetLeaseRow(r: StatusRollup, fleet: FleetHearing): string {
  const l = r.lease;
  if (l.state === "none") return row("runner", "none: the run is over");
  const silence = `the fleet has not heard from it for ${
    duration(fleet.silent_ms)
  }`;
  return l.state === "gone"
    ? row("runner", paint(`pid ${l.pid} on ${l.host}, gone: ${silence}`, "red"))
    : row(
      "runner",
      `pid ${l.pid} on ${l.host}, alive (the fleet hears from it)`,
    );
}

/** How a fleet run's runner is heard of (the report of a fleet run). */
export interface FleetHearing {
  /** How long the fleet has not heard from the run, in milliseconds. */
  silent_ms: number;
  /** The run's machine (its host name), where it resumes. */
  machine: string;
}

/** Options for {@linkcode renderStatus}. */
export interface RenderStatusOptions {
  /** The packet's name, when known. */
  packet: string | null;
  /** Whether `progress.selected` counts the packet's prompts, not the run's selection. */
  packetSelection: boolean;
  /** The `run` arguments that continue the run (TARGET and `--state-root`). */
  resumeTarget: string;
  /** For a fleet run: how the fleet hears of its runner (`null`: files). */
  fleet?: FleetHearing | null;
}

/**
 * Renders the rollup as the human report.
 *
 * @returns The report (for stdout) and the hint (for stderr), if any.
 */
export function renderStatus(
  r: StatusRollup,
  options: RenderStatusOptions,
): { text: string; hint: string | null } {
  const word = RUN_WORDS[r.run.status];
  const lines = [
    `${paint(options.packet ?? "(packet)", "bold")}  ${
      paint(word, WORD_STYLE[r.run.status])
    }`,
  ];
  lines.push(...attentionRow(r));
  if (r.workspace_id !== null) lines.push(row("workspace", r.workspace_id));
  const fleet = options.fleet ?? null;
  lines.push(row(fleet === null ? "state root" : "fleet run", r.state_root));
  if (r.run.status !== "never_run") {
    lines.push(runRow(r), progressRow(r, options.packetSelection));
    if (r.attempt.number !== null) {
      lines.push(
        row(
          "attempt",
          `${r.attempt.number} (${r.attempt.mode ?? "-"})${
            r.attempt.detail ? ` · ${r.attempt.detail}` : ""
          }`,
        ),
      );
      lines.push(...verifierRows(r));
    }
    lines.push(
      providerRow(r),
      ...budgetRow(r),
      steersRow(r),
      amendmentsRow(r),
      agentRow(r),
      leaseRow(r, fleet),
    );
  } else if (r.amendments.count > 0) {
    lines.push(amendmentsRow(r));
  }
  // Both go on where they stopped, under the same run id: a fleet run's
  // on its own machine, where its state root is.
  const resume = `prompt_runner run ${options.resumeTarget} --resume`;
  const hint = r.run.status === "runner_gone" || r.run.status === "interrupted"
    ? fleet === null
      ? `hint: ${resume}\n`
      : `hint: resume it on its machine, ${fleet.machine}: ${resume}\n`
    : null;
  return { text: lines.join("\n") + "\n", hint };
}
