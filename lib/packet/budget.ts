/**
 * The `budget:` block: what a run (in the manifest) or a prompt (in its
 * front matter) may spend, in money and tokens, before its attempt is
 * stopped as `budget_exhausted`.
 *
 * @module
 */

import { isRecord } from "../shared/is_record.ts";
import { invalid } from "./_fields.ts";
import { refuseUnknownKeys } from "./known_keys.ts";

/** The keys of a `budget:` block. */
export const BUDGET_KEYS = [
  "max_cost_usd",
  "max_input_tokens",
  "max_output_tokens",
] as const;

/** A budget key. */
export type BudgetKey = typeof BUDGET_KEYS[number];

/**
 * Spending limits: each `null` (or absent) is unbounded. In the manifest
 * they bound the whole run; a prompt's keys replace the manifest's for that
 * prompt and bound what the prompt itself spends.
 */
export type Budget = Partial<Record<BudgetKey, number>>;

/**
 * Reads a `budget:` value: `null` when absent or empty, else the limits it
 * sets.
 *
 * @throws {UsageError} naming the file and key for an unknown key or a
 *   value that is not a positive number (whole, for tokens).
 */
export function parseBudget(value: unknown, file: string): Budget | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) {
    invalid(
      file,
      `budget must be a map of ${BUDGET_KEYS.join(", ")}, found ${
        JSON.stringify(value)
      }`,
    );
  }
  refuseUnknownKeys(value, BUDGET_KEYS, file, { at: "budget" });
  const budget: Budget = {};
  for (const key of BUDGET_KEYS) {
    const limit = value[key];
    if (limit === undefined || limit === null) continue;
    const whole = key !== "max_cost_usd";
    if (
      typeof limit !== "number" || !Number.isFinite(limit) || limit <= 0 ||
      (whole && !Number.isInteger(limit))
    ) {
      invalid(
        file,
        `budget.${key} must be a positive ${
          whole ? "whole number of tokens" : "number of US dollars"
        }, found ${JSON.stringify(limit)}`,
      );
    }
    budget[key] = limit;
  }
  return Object.keys(budget).length === 0 ? null : budget;
}
