/**
 * The recovery policy: after an attempt's session and verification, decide
 * whether the prompt is complete, retried, repaired, or failed.
 *
 * @module
 */

import type { RecoveryConfig } from "../packet/recovery.ts";
import type { FailureEnvelope } from "../providers/failure.ts";
import type { VerifyReport } from "../verify/report.ts";

/** What happens after an attempt. */
export type RecoveryDecision =
  | { kind: "complete"; override: boolean; reason: string | null }
  | { kind: "retry"; delay_ms: number; reason: string }
  | { kind: "repair"; reason: string }
  | { kind: "verification_failed"; reason: string }
  | { kind: "provider_failed"; reason: string }
  | { kind: "verifier_fault"; reason: string };

/** The facts a decision is made from. */
export interface DecisionInput {
  /** The session's first failure, or `null` when the turn ended well. */
  failure: FailureEnvelope | null;
  /** The verifier's report. */
  report: VerifyReport;
  /** Retries made for this prompt in this run so far. */
  retries: number;
  /** Repairs made for this prompt in this run so far. */
  repairs: number;
  /** The prompt's recovery settings. */
  recovery: RecoveryConfig;
  /** Whether the attempt changed the workspace. */
  workspace_changed: boolean;
  /** A random number in [0, 1) for jitter (injectable for tests). */
  random?: () => number;
}

// A passing verifier does not excuse these: the agent was stopped on purpose.
const NO_OVERRIDE = ["approval_denied", "budget_exhausted"];

/** The retry limit for a failure class. */
export function retryLimit(
  recovery: RecoveryConfig,
  failureClass: string,
): number {
  return recovery.retry.class_attempts[failureClass] ??
    (ONLY_WHEN_ASKED.includes(failureClass) ? 0 : recovery.retry.max_attempts);
}

/**
 * Failure classes never retried or repaired unless the packet's
 * `retry.class_attempts` names them: a missing or bad key does not fix
 * itself, and every new attempt would be spent (and billed) for nothing.
 */
const ONLY_WHEN_ASKED = ["provider_auth_claim"];

/**
 * The delay before retry number `retries + 1`: the base delay (or the
 * provider's suggestion) doubled per retry, capped, with optional jitter.
 */
export function retryDelay(
  recovery: RecoveryConfig,
  failure: FailureEnvelope,
  retries: number,
  random: () => number = Math.random,
): number {
  const base = recovery.retry.base_delay_ms;
  const cap = Math.max(recovery.retry.max_delay_ms, base);
  const step = failure.suggested_delay_ms ?? base;
  const delay = Math.min(2 ** retries * step, cap);
  if (!recovery.retry.jitter || delay <= 0) return delay;
  const low = Math.max(Math.floor(delay / 2), 1);
  return low + Math.floor(random() * (delay - low + 1));
}

function unmet(report: VerifyReport): string {
  const failed = report.items.filter((item) => item.status !== "pass");
  const shown = failed.slice(0, 3).map((item) =>
    `${item.clause} ${item.label}: ${item.reason}`
  );
  const more = failed.length > 3 ? `; and ${failed.length - 3} more` : "";
  return shown.join("; ") + more;
}

/**
 * Decides what follows an attempt. Budgets count within the current run.
 *
 * | session | verifier | decision |
 * | --- | --- | --- |
 * | any | a fault | verifier_fault (the run halts; nothing is evidence) |
 * | ok | pass | complete |
 * | ok | fail | repair while the repair budget lasts, else verification_failed |
 * | failed | pass (with items) | complete, overriding the provider (not for approval_denied) |
 * | failed | fail, or an empty contract | retry if retryable and the class budget lasts; else repair if the workspace changed and repair is allowed; else provider_failed |
 *
 * @param input The attempt's facts and the budgets spent.
 * @returns The decision.
 */
export function decideOutcome(input: DecisionInput): RecoveryDecision {
  const { failure, report, recovery } = input;
  if (report.faults > 0) {
    const faults = report.items.filter((item) => item.status === "fault");
    return {
      kind: "verifier_fault",
      reason: `verifier fault: ${
        faults.map((item) => `${item.clause} ${item.label}: ${item.reason}`)
          .join("; ")
      }`,
    };
  }
  const canRepair = recovery.repair.enabled &&
    input.repairs < recovery.repair.max_attempts;
  if (failure === null) {
    if (report.passed) {
      return { kind: "complete", override: false, reason: null };
    }
    if (canRepair) return { kind: "repair", reason: `unmet: ${unmet(report)}` };
    return {
      kind: "verification_failed",
      reason: `verification failed: ${unmet(report)}` +
        (recovery.repair.enabled ? " (repair budget spent)" : ""),
    };
  }
  const failed = `${failure.failure_class}: ${failure.message}`;
  if (
    report.passed && report.items.length > 0 &&
    !NO_OVERRIDE.includes(failure.failure_class)
  ) {
    return {
      kind: "complete",
      override: true,
      reason: `the provider reported ${failed}, but verification passed`,
    };
  }
  const limit = retryLimit(recovery, failure.failure_class);
  if (
    failure.retryable && !failure.local_deterministic && input.retries < limit
  ) {
    return {
      kind: "retry",
      delay_ms: retryDelay(recovery, failure, input.retries, input.random),
      reason: failed,
    };
  }
  const exhausted = failure.retryable && !failure.local_deterministic;
  const mayRepair = !ONLY_WHEN_ASKED.includes(failure.failure_class) ||
    recovery.retry.class_attempts[failure.failure_class] !== undefined;
  if (
    input.workspace_changed && failure.repairable && canRepair && mayRepair
  ) {
    return {
      kind: "repair",
      reason: exhausted
        ? `${failed} (retry budget spent ${input.retries}/${limit})`
        : failed,
    };
  }
  return {
    kind: "provider_failed",
    reason: !mayRepair
      ? `${failed} (not retried: set retry.class_attempts.${failure.failure_class} to allow it)`
      : exhausted
      ? `${failed} (retry budget spent ${input.retries}/${limit})`
      : failed,
  };
}
