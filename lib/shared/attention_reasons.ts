/**
 * The reasons of `attention_needed`, apart from the event types so that a
 * snapshot reader checks them without loading every event's shape.
 *
 * @module
 */

/** Why a run needs a person (`attention_needed`). */
export const ATTENTION_REASONS = [
  "failed",
  "verifier_fault",
  "approval_denied",
  "steer_budget_exhausted",
  "budget_exhausted",
  "stalled",
] as const;

/** Why a run needs a person. */
export type AttentionReason = typeof ATTENTION_REASONS[number];
