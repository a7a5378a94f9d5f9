/**
 * The keys of a prompt's `simulate:` script, level by level. The simulated
 * provider parses the script's values when it plays it; its keys are the
 * packet format's, checked when the packet loads, whatever the provider.
 *
 * @module
 */

import { refuseUnknownKeys } from "./known_keys.ts";
import { isRecord } from "../shared/is_record.ts";

/** The keys of `simulate:`. */
export const SIMULATE_KEYS: readonly string[] = ["lane", "attempts", "resume"];

/** The keys of one step (`attempts[k]`, `resume`). */
export const SIMULATE_STEP_KEYS: readonly string[] = [
  "delay_ms",
  "repeat",
  "thinking",
  "messages",
  "tools",
  "writes",
  "usage",
  "error",
  "label",
];

/** The keys of a step's tool call. */
export const SIMULATE_TOOL_KEYS: readonly string[] = [
  "name",
  "input",
  "output",
  "error",
];

/** The keys of a step's write. */
export const SIMULATE_WRITE_KEYS: readonly string[] = [
  "path",
  "text",
  "append",
  "repo",
];

/** The keys of a step's usage. */
export const SIMULATE_USAGE_KEYS: readonly string[] = [
  "input_tokens",
  "output_tokens",
  "cost_usd",
];

/** The keys of a step's error. */
export const SIMULATE_ERROR_KEYS: readonly string[] = [
  "kind",
  "message",
  "recovery",
];

/** The keys of an error's `recovery` (what classifying the failure reads). */
export const SIMULATE_ERROR_RECOVERY_KEYS: readonly string[] = [
  "class",
  "retryable",
  "repairable",
  "resumeable",
  "local_deterministic",
  "suggested_delay_ms",
];

/** A list as the script allows it: one item may stand for a list of one. */
function items(value: unknown): unknown[] {
  return Array.isArray(value) ? value : value === undefined ? [] : [value];
}

function checkStep(raw: unknown, file: string, at: string): void {
  if (!isRecord(raw)) return;
  refuseUnknownKeys(raw, SIMULATE_STEP_KEYS, file, { at });
  items(raw.tools).forEach((tool, i) => {
    if (isRecord(tool)) {
      refuseUnknownKeys(tool, SIMULATE_TOOL_KEYS, file, {
        at: `${at}.tools[${i}]`,
      });
    }
  });
  items(raw.writes).forEach((write, i) => {
    if (isRecord(write)) {
      refuseUnknownKeys(write, SIMULATE_WRITE_KEYS, file, {
        at: `${at}.writes[${i}]`,
      });
    }
  });
  if (isRecord(raw.usage)) {
    refuseUnknownKeys(raw.usage, SIMULATE_USAGE_KEYS, file, {
      at: `${at}.usage`,
    });
  }
  if (isRecord(raw.error)) {
    refuseUnknownKeys(raw.error, SIMULATE_ERROR_KEYS, file, {
      at: `${at}.error`,
    });
    if (isRecord(raw.error.recovery)) {
      refuseUnknownKeys(
        raw.error.recovery,
        SIMULATE_ERROR_RECOVERY_KEYS,
        file,
        {
          at: `${at}.error.recovery`,
        },
      );
    }
  }
}

/**
 * Refuses an unknown key anywhere in a `simulate:` script. Values are left
 * to the simulated provider (a script of the wrong shape is its error).
 *
 * @throws {UsageError} naming the file and the key's dotted path.
 */
export function checkSimulateKeys(raw: unknown, file: string): void {
  if (!isRecord(raw)) return;
  refuseUnknownKeys(raw, SIMULATE_KEYS, file, { at: "simulate" });
  if (Array.isArray(raw.attempts)) {
    raw.attempts.forEach((step, i) =>
      checkStep(step, file, `simulate.attempts[${i}]`)
    );
  }
  checkStep(raw.resume, file, "simulate.resume");
}
