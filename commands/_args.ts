/**
 * Strict argument parsing (`node:util` parseArgs's rules): an unknown flag or
 * a missing value is a usage error that points at `--help`.
 *
 * @module
 */

import { type OptionSpec, parseStrictArgs } from "./_parse_args.ts";
import { errorText, UsageError } from "../lib/shared/errors.ts";
import { parseViewSettings, type ViewSettings } from "../lib/shared/view.ts";

/** The description of one flag. */
export type FlagSpec = OptionSpec;

/** Parsed arguments. */
export interface ParsedArgs {
  /** Flag values by name. */
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  /** Positional arguments. */
  positionals: string[];
}

/**
 * Parses a command's arguments strictly. `--help`/`-h` is always allowed.
 *
 * @throws {UsageError} for an unknown flag, a flag without its value, or a
 * value given to a boolean flag.
 */
export function parseCommandArgs(
  command: string,
  args: string[],
  flags: Record<string, FlagSpec>,
): ParsedArgs {
  try {
    const { values, positionals } = parseStrictArgs(args, {
      help: { type: "boolean", short: "h" },
      ...flags,
    });
    return { values: values as ParsedArgs["values"], positionals };
  } catch (error) {
    const message = errorText(error).split("\n")[0]!
      .replace(/\. To specify a positional argument.*$/, "")
      .replace(/\.$/, "");
    throw new UsageError(`Invalid arguments for "${command}": ${message}`, {
      code: "USAGE",
      hint: `Run 'prompt_runner ${command} --help'`,
    });
  }
}

/** Reads a string flag, or `undefined`. */
export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Reads a number of seconds given to `flag` (`--timeout 30`, `1.5`):
 * positive and finite, else a usage error naming the flag.
 */
export function secondsFlag(flag: string, value: string): number {
  const seconds = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 31_536_000) {
    throw new UsageError(
      `${flag} must be a positive number of seconds, found ${
        JSON.stringify(value)
      }`,
      { hint: `Give a number of seconds, like ${flag} 30 or ${flag} 2.5` },
    );
  }
  return seconds;
}

/** Reads a boolean flag. */
export function booleanFlag(args: ParsedArgs, name: string): boolean {
  return args.values[name] === true;
}

/** Reads the view flags shared by `run`, `control view` and `control events`. */
export function viewFlags(
  values: Record<string, unknown>,
): Partial<ViewSettings> {
  const raw: Record<string, unknown> = {};
  for (
    const [flag, key] of [
      ["log-mode", "log_mode"],
      ["tool-output", "tool_output"],
      ["thinking", "thinking"],
      ["diff", "diff"],
    ] as const
  ) {
    if (values[flag] !== undefined) raw[key] = values[flag];
  }
  return parseViewSettings(raw, { allowEmpty: true });
}
