/**
 * Failure classification: from a provider's error to a failure class and the
 * recovery it allows.
 *
 * @module
 */

import { isRecord } from "../shared/is_record.ts";

/** A classified provider failure. */
export interface FailureEnvelope {
  /** The failure class, such as `provider_capacity` or `transport_timeout`. */
  failure_class: string;
  /** Whether a fresh attempt may help. */
  retryable: boolean;
  /** Whether a repair attempt may help. */
  repairable: boolean;
  /** Whether resuming the same session may help. */
  resumeable: boolean;
  /** Whether the failure would repeat identically (never retried). */
  local_deterministic: boolean;
  /** The delay the provider suggests before a retry, in milliseconds. */
  suggested_delay_ms: number | null;
  /** The provider's message. */
  message: string;
}

const FLAGS: Record<string, [boolean, boolean, boolean]> = {
  // class: [retryable, repairable, resumeable]
  provider_capacity: [true, true, false],
  provider_rate_limit: [true, true, false],
  provider_auth_claim: [true, true, false],
  provider_config_claim: [true, true, false],
  provider_runtime_claim: [true, true, false],
  protocol_error: [true, true, true],
  transport_disconnect: [true, true, true],
  transport_timeout: [true, true, true],
  user_cancelled: [false, false, false],
  approval_denied: [false, false, false],
  guardrail_blocked: [false, false, false],
  // Another attempt would spend past the same limit.
  budget_exhausted: [false, false, false],
};

const KIND_CLASSES: Record<string, string> = {
  provider_capacity: "provider_capacity",
  capacity: "provider_capacity",
  provider_rate_limit: "provider_rate_limit",
  rate_limit: "provider_rate_limit",
  provider_auth_claim: "provider_auth_claim",
  auth_error: "provider_auth_claim",
  provider_config_claim: "provider_config_claim",
  config_invalid: "provider_config_claim",
  provider_runtime_claim: "provider_runtime_claim",
  runtime_error: "provider_runtime_claim",
  protocol_error: "protocol_error",
  transport_error: "transport_disconnect",
  transport_exit: "transport_disconnect",
  transport_disconnect: "transport_disconnect",
  transport_timeout: "transport_timeout",
  user_cancelled: "user_cancelled",
  approval_denied: "approval_denied",
  guardrail_blocked: "guardrail_blocked",
  budget_exhausted: "budget_exhausted",
};

const MESSAGE_CLASSES: [RegExp, string][] = [
  [/\bcancell?ed\b/i, "user_cancelled"],
  [/approval (denied|required)/i, "approval_denied"],
  [/guardrail|policy blocked/i, "guardrail_blocked"],
  [/protocol error/i, "protocol_error"],
  [/connection reset|disconnected/i, "transport_disconnect"],
  [/timed? ?out/i, "transport_timeout"],
  [/rate limit|too many requests/i, "provider_rate_limit"],
  [
    /capacity|temporarily unavailable|try again later|overloaded|busy/i,
    "provider_capacity",
  ],
  [
    /api key|\bauth|unauthori[sz]ed|forbidden|permission/i,
    "provider_auth_claim",
  ],
  [
    /unsupported|invalid|bad request|unknown model|does not exist|not available/i,
    "provider_config_claim",
  ],
];

/** The failure kinds the simulated provider's `error.kind` accepts. */
export const FAILURE_KINDS: readonly string[] = Object.keys(KIND_CLASSES);

function flagOf(value: unknown): boolean | undefined {
  return typeof value === "boolean" ? value : undefined;
}

/**
 * Classifies a provider error. An explicit `recovery` map wins; then the
 * error's `kind`; then words in its message; anything else is a
 * `provider_runtime_claim` (retryable).
 *
 * @param error The `provider_error` of an `error_occurred` event, or any
 * object with `kind`, `message` and an optional `recovery` map.
 * @returns The failure envelope.
 *
 * @example Usage
 * ```ts
 * import { classifyFailure } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const failure = classifyFailure({ kind: "transport_timeout", message: "idle" });
 * assert.equal(failure.failure_class, "transport_timeout");
 * assert.equal(failure.resumeable, true);
 * ```
 */
export function classifyFailure(error: unknown): FailureEnvelope {
  const record = isRecord(error) ? error : {};
  const message = typeof record.message === "string"
    ? record.message
    : typeof error === "string"
    ? error
    : "provider failure";
  const kind = typeof record.kind === "string" ? record.kind : "";
  let failureClass = KIND_CLASSES[kind];
  if (failureClass === undefined) {
    failureClass = MESSAGE_CLASSES.find(([pattern]) => pattern.test(message))
      ?.[1] ?? "provider_runtime_claim";
  }
  const recovery = isRecord(record.recovery) ? record.recovery : {};
  if (typeof recovery.class === "string" && recovery.class.trim()) {
    failureClass = recovery.class.trim().toLowerCase().replaceAll("-", "_");
  }
  const [retryable, repairable, resumeable] = FLAGS[failureClass] ??
    [false, false, false];
  const capacity = failureClass === "provider_capacity" ||
    failureClass === "provider_rate_limit";
  const delay = recovery.suggested_delay_ms;
  return {
    failure_class: failureClass,
    retryable: flagOf(recovery.retryable) ?? retryable,
    repairable: flagOf(recovery.repairable) ?? repairable,
    resumeable: flagOf(recovery.resumeable) ?? resumeable,
    local_deterministic: flagOf(recovery.local_deterministic) ?? false,
    suggested_delay_ms: typeof delay === "number" && delay >= 0
      ? delay
      : capacity
      ? 2000
      : null,
    message,
  };
}
