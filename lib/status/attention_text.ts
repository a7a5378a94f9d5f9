/**
 * Attention and spend in words, the same in `status`, `control status`,
 * `watch` and the dashboard.
 *
 * @module
 */

import type { Attention, BudgetSpending } from "../shared/snapshot_schema.ts";

export type { Attention, BudgetSpending };

const UNITS = {
  max_cost_usd: "",
  max_input_tokens: " input tokens",
  max_output_tokens: " output tokens",
} as const;

/** One limit and its spend: `$0.0600 of $0.0500 (the run's)`. */
export function spendingText(b: BudgetSpending): string {
  const show = (n: number): string =>
    b.key === "max_cost_usd" ? `$${n.toFixed(4)}` : String(Math.round(n));
  return `${show(b.spent)} of ${show(b.limit)}${UNITS[b.key]} (${
    b.scope === "run" ? "the run's" : "the prompt's"
  })`;
}

/** Why a run needs a person, where: `budget exhausted on 01 attempt 1`. */
export function attentionText(a: Attention): string {
  const where = a.prompt_id === null
    ? ""
    : ` on ${a.prompt_id}${a.attempt === null ? "" : ` attempt ${a.attempt}`}`;
  return `${a.reason.replaceAll("_", " ")}${where}`;
}
