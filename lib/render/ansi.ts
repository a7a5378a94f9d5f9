/**
 * ANSI styling for renderers, and its removal for sinks that must not carry
 * escape codes.
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

/** Wraps text in an ANSI style. Sinks strip it when colour is off. */
export function paint(text: string, style: Style): string {
  return text === "" ? text : `\x1b[${STYLE_CODES[style]}m${text}\x1b[0m`;
}

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** Removes every ANSI escape sequence from text. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}
