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

export {
  age,
  attempt,
  cost,
  count,
  duration,
  progress,
  runPath,
  seg,
  tokens,
  UNKNOWN,
} from "./page/shared.ts";
