/**
 * View settings: how a run renders, changeable live through the control
 * plane.
 *
 * @module
 */

import { UsageError } from "./errors.ts";

/** A value as JSON for a message, cut to a readable length. */
function quoted(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = "(a value that cannot be shown)";
  }
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** The allowed values of each view setting. */
export const VIEW_OPTIONS = {
  log_mode: ["compact", "verbose", "studio"],
  tool_output: ["none", "summary", "preview", "full"],
  thinking: ["show", "hide"],
  diff: ["none", "stat", "full"],
} as const;

/** The name of a view setting. */
export type ViewKey = keyof typeof VIEW_OPTIONS;

/** How a run renders its events. */
export interface ViewSettings {
  /** The renderer: `compact`, `verbose` or `studio`. */
  log_mode: typeof VIEW_OPTIONS.log_mode[number];
  /** How much tool output to show: `none`, `summary`, `preview` or `full`. */
  tool_output: typeof VIEW_OPTIONS.tool_output[number];
  /** Whether to show the agent's thinking: `show` or `hide`. */
  thinking: typeof VIEW_OPTIONS.thinking[number];
  /** How to show file changes: `none`, `stat` or `full`. */
  diff: typeof VIEW_OPTIONS.diff[number];
}

/** The view a run starts with when neither the packet nor a flag says otherwise. */
export const DEFAULT_VIEW: Readonly<ViewSettings> = Object.freeze({
  log_mode: "compact",
  tool_output: "summary",
  thinking: "show",
  diff: "stat",
});

/** The names of the view settings, in display order. */
export const VIEW_KEYS: readonly ViewKey[] = [
  "log_mode",
  "tool_output",
  "thinking",
  "diff",
];

/**
 * Checks a set of view settings and returns them typed. Every key must be a
 * view setting and every value one of its allowed values.
 *
 * @param input The settings to check, for example parsed from a request.
 * @param options `allowEmpty` accepts an empty set (the default refuses it).
 * @returns The settings, typed.
 * @throws {UsageError} when a key is unknown, a value is not allowed, or the
 * set is empty; the message names the allowed keys or values.
 *
 * @example Usage
 * ```ts
 * import { parseViewSettings } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(parseViewSettings({ tool_output: "full" }), {
 *   tool_output: "full",
 * });
 * assert.throws(() => parseViewSettings({ tool_output: "everything" }));
 * ```
 */
export function parseViewSettings(
  input: unknown,
  options: { allowEmpty?: boolean } = {},
): Partial<ViewSettings> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new UsageError("View settings must be an object", {
      code: "INVALID_VIEW",
    });
  }
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!(VIEW_KEYS as readonly string[]).includes(key)) {
      throw new UsageError(
        `Unknown view setting ${quoted(key)}: expected one of ${
          VIEW_KEYS.join(", ")
        }`,
        { code: "UNKNOWN_VIEW_KEY" },
      );
    }
    const allowed = VIEW_OPTIONS[key as ViewKey] as readonly string[];
    if (typeof value !== "string" || !allowed.includes(value)) {
      throw new UsageError(
        `Invalid ${key} ${quoted(value)}: expected one of ${
          allowed.join(", ")
        }`,
        { code: "INVALID_VIEW_VALUE" },
      );
    }
    result[key] = value;
  }
  if (!options.allowEmpty && Object.keys(result).length === 0) {
    throw new UsageError("No view setting given", {
      code: "EMPTY_VIEW",
      hint:
        "Name at least one of --log-mode, --tool-output, --thinking, --diff",
    });
  }
  return result as Partial<ViewSettings>;
}
