/**
 * Small HTML helpers for the dashboard's pages: escaping (every run, agent
 * and operator text is hostile) and the few formats the pages share with
 * the page's script.
 *
 * @module
 */

import { terminalSafe } from "../../mod.ts";

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Escapes text for an HTML text node or a quoted attribute value. Escape
 * sequences and control characters (but newline and tab) are removed first:
 * they mean nothing in a page and can hide what text says.
 */
export function esc(text: unknown): string {
  const value = text === null || text === undefined ? "" : String(text);
  return terminalSafe(value).replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Attributes as ` name="value"`, each value escaped; `null`/`false` leave one out. */
export function attrs(
  values: Record<string, string | number | boolean | null | undefined>,
): string {
  let out = "";
  for (const [name, value] of Object.entries(values)) {
    if (value === null || value === undefined || value === false) continue;
    out += value === true ? ` ${name}` : ` ${name}="${esc(value)}"`;
  }
  return out;
}

/** An element with escaped attributes around already-built HTML. */
export function el(
  tag: string,
  attributes: Record<string, string | number | boolean | null | undefined>,
  inner = "",
): string {
  return `<${tag}${attrs(attributes)}>${inner}</${tag}>`;
}

/** A path segment of a dashboard URL. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/** The path of a run's page (`/run/{root}/{run}`). */
export function runPath(root: string, run: string): string {
  return `/run/${seg(root)}/${seg(run)}`;
}

/** `—` for a value nobody knows. */
export const UNKNOWN = "—";

/** A duration: `850 ms`, `12s`, `3m04s`, `1h02m`. */
export function duration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) return UNKNOWN;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/** A token count: `950`, `12.3k`, `4.1M`. */
export function count(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return UNKNOWN;
  if (value < 1000) return String(value);
  if (value < 1_000_000) return `${(value / 1000).toFixed(1)}k`;
  return `${(value / 1_000_000).toFixed(1)}M`;
}

/** Input and output tokens: `12.3k in · 950 out`. */
export function tokens(input: number | null, output: number | null): string {
  if (input === null && output === null) return UNKNOWN;
  return `${count(input)} in · ${count(output)} out`;
}

/** A cost in US dollars: `$0.0123`. */
export function cost(usd: number | null): string {
  if (usd === null || !Number.isFinite(usd)) return UNKNOWN;
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

/** An attempt: `#2 retry`, with its detail when there is one. */
export function attempt(
  number: number | null,
  mode: string | null,
  detail: string | null = null,
): string {
  if (number === null) return UNKNOWN;
  return `#${number}${mode ? ` ${mode}` : ""}${detail ? ` (${detail})` : ""}`;
}

/** Progress: `2/5`. */
export function progress(
  completed: number | null,
  selected: number | null,
): string {
  if (completed === null && selected === null) return UNKNOWN;
  return `${completed ?? "?"}/${selected ?? "?"}`;
}

/** How long ago: `4s ago`. */
export function age(ms: number | null): string {
  return ms === null ? UNKNOWN : `${duration(ms)} ago`;
}
