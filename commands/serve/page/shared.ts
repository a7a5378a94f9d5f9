/**
 * What the dashboard's server and its page code both use, from one module:
 * the formatters, the runs page's row, the timeline's fold and the view's
 * choices. The server imports it; the page is built from it (`deno task
 * gen`). Plain data and functions only: no Deno and no DOM.
 *
 * @module
 */

import { duration as forPeople } from "../../../lib/render/duration.ts";
import {
  type BudgetSpending,
  spendingText,
} from "../../../lib/status/attention_text.ts";

/** `—` for a value nobody knows. */
export const UNKNOWN = "—";

/** Whether `value` is a finite number (data from JSON may be anything). */
export function isNum(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** A duration, as everywhere (`850ms`, `12.5s`, `3m04s`, `1h02m`). */
export function duration(ms: number | null | undefined): string {
  return isNum(ms) && ms >= 0 ? forPeople(ms) : UNKNOWN;
}

/** A token count: `950`, `12.3k`, `4.1M`. */
export function count(value: number | null | undefined): string {
  if (!isNum(value)) return UNKNOWN;
  if (value < 1000) return String(value);
  if (value < 1_000_000) return `${(value / 1000).toFixed(1)}k`;
  return `${(value / 1_000_000).toFixed(1)}M`;
}

/** Input and output tokens: `12.3k in · 950 out`. */
export function tokens(
  input: number | null | undefined,
  output: number | null | undefined,
): string {
  if (!isNum(input) && !isNum(output)) return UNKNOWN;
  return `${count(input)} in · ${count(output)} out`;
}

/** A cost in US dollars: `$0.0123`. */
export function cost(usd: number | null | undefined): string {
  if (!isNum(usd)) return UNKNOWN;
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

/** An attempt: `#2 retry`, with its detail when there is one. */
export function attempt(
  number: number | null | undefined,
  mode: string | null | undefined,
  detail: string | null = null,
): string {
  if (!isNum(number)) return UNKNOWN;
  return `#${number}${mode ? ` ${mode}` : ""}${detail ? ` (${detail})` : ""}`;
}

/** Progress: `2/5`. */
export function progress(
  completed: number | null | undefined,
  selected: number | null | undefined,
): string {
  if (!isNum(completed) && !isNum(selected)) return UNKNOWN;
  return `${isNum(completed) ? completed : "?"}/${
    isNum(selected) ? selected : "?"
  }`;
}

/** How long ago: `4s ago`. */
export function age(ms: number | null | undefined): string {
  return isNum(ms) ? `${duration(ms)} ago` : UNKNOWN;
}

/** A path segment of a dashboard URL. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/** The path of a run's page (`/run/{root}/{run}`). */
export function runPath(root: string, run: string): string {
  return `/run/${seg(root)}/${seg(run)}`;
}

/** A snake_case word as words: `runner gone`. */
export function words(text: unknown): string {
  return String(text ?? "").replaceAll("_", " ");
}

/** A prompt: `01 name`. */
export function promptText(
  id: string | null | undefined,
  name: string | null | undefined,
): string {
  return id === null || id === undefined
    ? UNKNOWN
    : `${id}${name ? ` ${name}` : ""}`;
}

/** The keys of a view, in the order they are shown and asked for. */
export const VIEW_KEYS = [
  "log_mode",
  "tool_output",
  "thinking",
  "diff",
] as const;

/** A view's settings as the page receives them. */
export type ViewData = Record<(typeof VIEW_KEYS)[number], string>;

/** The view as one line: `studio · tools summary · thinking show · diff stat`. */
export function viewText(view: ViewData | null | undefined): string {
  if (!view) return UNKNOWN;
  return `${view.log_mode} · tools ${view.tool_output} · thinking ${view.thinking} · diff ${view.diff}`;
}

/** A control-log entry as the page receives it. */
export interface LogData {
  at: string;
  run_id?: string | null;
  prompt_id?: string | null;
  request_id?: string | null;
  command: string;
  author?: string | null;
  params?: Record<string, unknown> | null;
  outcome: string;
  reason?: string | null;
}

/** One control-log entry's words. */
export function logText(entry: LogData): string {
  const params = entry.params ?? {};
  let what = "";
  if (entry.command === "steer" && typeof params.text === "string") {
    what = ` “${params.text}”`;
  } else if (entry.command === "set_view") {
    what = Object.entries(params).map(([k, v]) => ` ${k}=${String(v)}`)
      .join("");
  } else if (typeof params.clause === "string") {
    what = ` ${params.clause}`;
  }
  return `${entry.at} ${
    entry.author ?? "unknown"
  } ${entry.command}${what} → ${entry.outcome}${
    entry.reason ? `: ${entry.reason}` : ""
  }`;
}

/** One row of the runs page, as the server sends it (`RunRow`). */
export interface RowData {
  /** The state root's key in URLs (a workspace id, or `r-` + 12 hex). */
  root: string;
  /** The run's id (`""` for a root that has never run). */
  run: string;
  /** What the operator named: the workspace id, packet or state root. */
  target: string;
  /** The packet's name, when known. */
  packet: string | null;
  /** Where the run stands (`status --json`'s word). */
  status: string;
  /** Selected prompts completed and selected, e.g. `2/5`. */
  progress: { completed: number | null; selected: number | null };
  /** The prompt running now, or the last one the run worked on. */
  current: { id: string | null; name: string | null };
  /** That prompt's attempt in this run. */
  attempt: {
    number: number | null;
    mode: string | null;
    detail: string | null;
  };
  /** Milliseconds since the run started (running), or its length. */
  elapsed_ms: number | null;
  /** Tokens and cost over the run. */
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  /** Milliseconds since the run's last event. */
  last_event_age_ms: number | null;
  /** The runner's lease. */
  runner: string;
  /** Why the run needs a person (`null`: it does not). */
  attention: {
    reason: string;
    prompt_id: string | null;
    attempt: number | null;
    detail: string;
  } | null;
}

/** Why a run needs a person, in words: `budget exhausted on 01 attempt 1`. */
export function attentionWords(a: RowData["attention"]): string {
  if (!a) return UNKNOWN;
  return `${words(a.reason)}${a.prompt_id ? ` on ${a.prompt_id}` : ""}${
    isNum(a.attempt) ? ` attempt ${a.attempt}` : ""
  }`;
}

/** The attention field of a run page: the reason, where, and what happened. */
export function attentionLine(a: unknown): string {
  if (!a || typeof a !== "object") return "none";
  const at = a as NonNullable<RowData["attention"]>;
  return `${attentionWords(at)}: ${String(at.detail ?? "")}`;
}

/** The budget field of a run page: each limit's spend, or none. */
export function budgetWords(budget: unknown): string {
  if (!Array.isArray(budget) || budget.length === 0) return "none";
  return budget.filter((b) => b && typeof b === "object").map((b) =>
    spendingText(b as BudgetSpending)
  ).join(" · ");
}

/** The cells of a runs-page row after its name, in order. */
export const ROW_FIELDS = [
  "target",
  "status",
  "attention",
  "progress",
  "prompt",
  "attempt",
  "elapsed",
  "tokens",
  "cost",
  "last-event",
  "runner",
] as const;

/** A row's cell texts, by field, and the classes of those that have one. */
export function rowCells(
  row: RowData,
): {
  text: Record<(typeof ROW_FIELDS)[number], string>;
  classes: Partial<Record<(typeof ROW_FIELDS)[number], string>>;
} {
  return {
    text: {
      target: row.target,
      status: words(row.status),
      attention: attentionWords(row.attention),
      progress: progress(row.progress?.completed, row.progress?.selected),
      prompt: promptText(row.current?.id, row.current?.name),
      attempt: attempt(
        row.attempt?.number,
        row.attempt?.mode,
        row.attempt?.detail,
      ),
      elapsed: duration(row.elapsed_ms),
      tokens: tokens(row.input_tokens, row.output_tokens),
      cost: cost(row.cost_usd),
      "last-event": age(row.last_event_age_ms),
      runner: words(row.runner),
    },
    classes: {
      target: "target",
      status: `status status-${row.status}`,
      attention: row.attention
        ? `attention attention-${row.attention.reason}`
        : "attention",
      runner: `runner runner-${row.runner}`,
    },
  };
}

/** The event types that change a run page's timeline; the rest only move its seq on. */
export const TIMELINE_TYPES: ReadonlySet<string> = new Set([
  "prompt_started",
  "retry_scheduled",
  "prompt_completed",
  "prompt_failed",
  "prompt_steered",
  "run_finished",
]);

/** How an attempt ended, for the timeline's colours. */
export type AttemptOutcome =
  | "completed"
  | "retried"
  | "repaired"
  | "failed"
  | "interrupted"
  | "running";

/** An event as the timeline reads it. */
export interface TimelineEvent {
  seq: number;
  type: string;
  prompt_id?: string | null;
  attempt?: number | null;
  data?: Record<string, unknown>;
}

/** What one event does to the timeline. */
export type TimelineStep =
  /** Every running attempt ends so (the run finished). */
  | { kind: "end_all"; outcome: AttemptOutcome }
  /** A prompt's running attempt ends so. */
  | { kind: "end"; prompt: string; outcome: AttemptOutcome }
  /** A prompt's new attempt starts (its number when the event says it). */
  | {
    kind: "start";
    prompt: string;
    name: string | null;
    number: number | null;
    mode: string;
    seq: number;
  }
  /** A steer was delivered to a prompt. */
  | { kind: "steer"; prompt: string; seq: number; text: string }
  /** A prompt's running attempt reaches this seq. */
  | { kind: "reach"; prompt: string; seq: number };

/** An attempt's outcome when the next attempt of its prompt starts. */
function endedBy(mode: unknown): AttemptOutcome {
  if (mode === "retry") return "retried";
  if (mode === "repair") return "repaired";
  return "interrupted";
}

/**
 * The timeline's fold, one event at a time: what the event does to its
 * prompt's attempts (a next attempt ends the one before as `retried`,
 * `repaired` or `interrupted`; `run_finished` ends every running one as
 * `interrupted`) and marks. The server folds a run's events into its
 * timeline with it, the page its live ones.
 */
export function timelineSteps(event: TimelineEvent): TimelineStep[] {
  if (event.type === "run_finished") {
    return [{ kind: "end_all", outcome: "interrupted" }];
  }
  const prompt = event.prompt_id;
  if (prompt === null || prompt === undefined) return [];
  const d = event.data ?? {};
  switch (event.type) {
    case "prompt_started":
      return [
        { kind: "end", prompt, outcome: endedBy(d.mode) },
        {
          kind: "start",
          prompt,
          name: typeof d.name === "string" ? d.name : null,
          number: Number(event.attempt ?? d.attempt) || null,
          mode: typeof d.mode === "string" ? d.mode : "run",
          seq: event.seq,
        },
      ];
    case "retry_scheduled":
      return [{ kind: "reach", prompt, seq: event.seq }, {
        kind: "end",
        prompt,
        outcome: "retried",
      }];
    case "prompt_completed":
      return [{ kind: "reach", prompt, seq: event.seq }, {
        kind: "end",
        prompt,
        outcome: "completed",
      }];
    case "prompt_failed":
      return [{ kind: "reach", prompt, seq: event.seq }, {
        kind: "end",
        prompt,
        outcome: d.status === "interrupted" ? "interrupted" : "failed",
      }];
    case "prompt_steered":
      return [{ kind: "reach", prompt, seq: event.seq }, {
        kind: "steer",
        prompt,
        seq: event.seq,
        text: `${d.author ?? "unknown"}: ${d.text ?? ""}`,
      }];
  }
  return [{ kind: "reach", prompt, seq: event.seq }];
}
