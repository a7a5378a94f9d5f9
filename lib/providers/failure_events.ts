/**
 * The canonical events that end a CLI's turn in failure, the same for every
 * adapter.
 *
 * @module
 */

import type { CliFailure } from "./cli_profile.ts";
import type { ProviderEvent } from "../shared/events.ts";

/**
 * The events that report a CLI's failure: `error_occurred` then
 * `run_failed`, carrying the failure class as the provider error's `kind`.
 *
 * @example Usage
 * ```ts
 * import { failureEvents } from "./failure_events.ts";
 * import assert from "node:assert/strict";
 *
 * const [first] = failureEvents("codex", {
 *   kind: "provider_auth_claim",
 *   message: "401 Unauthorized",
 * });
 * assert.equal(first?.type, "error_occurred");
 * ```
 */
export function failureEvents(
  provider: string,
  failure: CliFailure,
): ProviderEvent[] {
  const data = {
    error_code: failure.kind,
    error_message: failure.message,
    provider_error: { provider, kind: failure.kind, message: failure.message },
  };
  return [{ type: "error_occurred", data }, { type: "run_failed", data }];
}
