/**
 * Which events trigger which `notify:` moments: `attention` every
 * `attention_needed`; `failed` a `run_finished` whose status is `failed` or
 * `blocked`; `completed` one whose status is `completed`; `finished` every
 * `run_finished` (interrupted included).
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { NotifyOn, NotifyRule } from "../shared/notify_rule.ts";

/**
 * The moments an event is, most specific first (none for most events).
 *
 * @example Usage
 * ```ts
 * import { notifyMoments } from "./notify_moments.ts";
 * import assert from "node:assert/strict";
 *
 * const end = {
 *   v: 1, seq: 9, at: "2026-01-01T00:00:00.000Z", run_id: "r1", prompt_id: null,
 *   attempt: null, type: "run_finished",
 *   data: { status: "blocked", reason: "waiting for 01", prompts: {} },
 * } as const;
 * assert.deepEqual(notifyMoments(end), ["failed", "finished"]);
 * ```
 */
export function notifyMoments(event: RunEvent): NotifyOn[] {
  if (event.type === "attention_needed") return ["attention"];
  if (event.type !== "run_finished") return [];
  switch (event.data.status) {
    case "completed":
      return ["completed", "finished"];
    case "failed":
    case "blocked":
      return ["failed", "finished"];
    default:
      return ["finished"];
  }
}

/**
 * The moment a rule fires for, given an event's moments: the most specific
 * one the rule names, or `null`. A rule fires at most once per event.
 */
export function ruleMoment(
  rule: NotifyRule,
  moments: readonly NotifyOn[],
): NotifyOn | null {
  return moments.find((moment) => rule.on.includes(moment)) ?? null;
}
