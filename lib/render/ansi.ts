/**
 * ANSI styling for renderers, and the removal of everything else a terminal
 * would act on: text from agents, operators and files is shown, never obeyed.
 *
 * @module
 */

/** A style a renderer can apply. */
export type Style =
  | "bold"
  | "dim"
  | "red"
  | "green"
  | "yellow"
  | "blue"
  | "magenta"
  | "cyan";

const STYLE_CODES: Record<Style, number> = {
  bold: 1,
  dim: 2,
  red: 31,
  green: 32,
  yellow: 33,
  blue: 34,
  magenta: 35,
  cyan: 36,
};

/**
 * Wraps text in an ANSI style. Sinks strip it when colour is off. Text that
 * did not come from the program itself must go through
 * {@linkcode terminalSafe} before it is painted.
 */
export function paint(text: string, style: Style): string {
  return text === "" ? text : `\x1b[${STYLE_CODES[style]}m${text}\x1b[0m`;
}

// Escape sequences, in their 7-bit (ESC …) and 8-bit (C1) forms: CSI with
// parameters, intermediates and a final byte; the string sequences (OSC, DCS,
// SOS, PM, APC) up to BEL or ST; any other ESC with intermediates and a final
// byte. Whatever is left of an unfinished sequence loses its ESC below.
const SEQUENCE = new RegExp(
  [
    "(?:\\x1b\\[|\\x9b)[\\x30-\\x3f]*[\\x20-\\x2f]*[\\x40-\\x7e]",
    // The body stops at any ESC or C1 introducer, so that a scan never
    // runs past the next sequence (text with many unfinished ones stays
    // linear).
    "(?:\\x1b[\\]PX^_]|[\\x90\\x98\\x9d-\\x9f])[^\\x07\\x1b\\x90\\x98\\x9b-\\x9f]*(?:\\x07|\\x1b\\\\|\\x9c)",
    "\\x1b[\\x20-\\x2f]*[\\x30-\\x7e]",
    // C0 but newline and tab, DEL, C1: each on its own.
    "[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]",
  ].join("|"),
  "g",
);
// deno-lint-ignore no-control-regex
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
// deno-lint-ignore no-control-regex
const STYLE = /^\x1b\[[0-9;]*m$/;
// deno-lint-ignore no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;

/** Options for {@linkcode terminalSafe}. */
export interface TerminalSafeOptions {
  /**
   * Keep SGR styling (`ESC [ … m`, what {@linkcode paint} writes). Only for
   * text whose untrusted parts were made safe before they were painted.
   */
  style?: boolean;
}

/**
 * Makes text safe to show on a terminal: removes every escape sequence
 * (CSI, OSC, DCS, … in 7-bit and 8-bit form) and every control character
 * except newline and tab (the rest of C0, DEL, and C1, U+0080–U+009F).
 *
 * @param text Text from anywhere: an agent, an operator, a file.
 * @param options `style: true` keeps SGR styling sequences.
 * @returns The text without anything a terminal would act on.
 *
 * @example Usage
 * ```ts
 * import { terminalSafe } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(terminalSafe("a\x07b\x1b]0;title\x07c\x1b[31md\n"), "abcd\n");
 * assert.equal(terminalSafe("\x1b[1mbold\x1b[0m\x1b[2J", { style: true }), "\x1b[1mbold\x1b[0m");
 * ```
 */
export function terminalSafe(
  text: string,
  options: TerminalSafeOptions = {},
): string {
  if (!UNSAFE.test(text)) return text;
  // Most often the only escapes are a renderer's own styling: then the full
  // scan would remove just those, or keep them all with `style`.
  const plain = text.replace(SGR, "");
  if (!UNSAFE.test(plain)) return options.style === true ? text : plain;
  return text.replace(
    SEQUENCE,
    (found) => options.style === true && STYLE.test(found) ? found : "",
  );
}

/**
 * A copy of JSON-like data in which every string, object keys included, is
 * {@linkcode terminalSafe}: for records that are formatted for people.
 *
 * @param value Data parsed from JSON (or shaped like it).
 * @returns The data with terminal-safe strings: the input itself when it
 * has nothing to change, otherwise a copy (the input is never changed).
 *
 * @example Usage
 * ```ts
 * import { terminalSafeData } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(
 *   terminalSafeData({ author: "ada\x07", params: { text: ["\x1b[31mred"] } }),
 *   { author: "ada", params: { text: ["red"] } },
 * );
 * ```
 */
export function terminalSafeData<T>(value: T): T {
  return safeValue(value) as T;
}

// A raw control or C1 character, or an escape that may decode to one.
// deno-lint-ignore no-control-regex
const UNSAFE_IN_JSON = /[\x00-\x1f\x7f-\x9f]|\\[bfru]/;
/** The value last vouched for: parsed from JSON text with nothing unsafe in it. */
let vouched: object | null = null;

/**
 * Notes that `value` was parsed from `json` (by `JSON.parse`), or encoded
 * to it (by `JSON.stringify`, of plain data), so that
 * {@linkcode terminalSafeData} need not walk it when the text shows that
 * no string in it can hold anything unsafe: no control or C1 character,
 * and no escape (`\b`, `\f`, `\r`, `\u…`) that could decode to one. One
 * value at a time (each call replaces the last); `null` forgets it. The
 * value must not be changed while it is vouched for.
 *
 * @returns Whether the value was vouched for.
 */
export function vouchParsed(value: object | null, json = ""): boolean {
  vouched = value !== null && !UNSAFE_IN_JSON.test(json) ? value : null;
  return vouched !== null;
}

/** The value itself when nothing in it needs changing (no copy), else a safe copy. */
function safeValue(value: unknown): unknown {
  if (typeof value === "string") return terminalSafe(value);
  if (value === vouched && value !== null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = safeValue(value[i]);
      if (copy === null && item !== value[i]) copy = value.slice(0, i);
      copy?.push(item);
    }
    return copy ?? value;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    let changed = false;
    const safe = entries.map(([key, item]): [string, unknown] => {
      const safeKey = terminalSafe(key);
      const safeItem = safeValue(item);
      if (safeKey !== key || safeItem !== item) changed = true;
      return [safeKey, safeItem];
    });
    return changed ? Object.fromEntries(safe) : value;
  }
  return value;
}

/** Removes every escape sequence and control character but newline and tab. */
export function stripAnsi(text: string): string {
  return terminalSafe(text);
}
