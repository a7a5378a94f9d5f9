/**
 * The failure an ACP prompt's end means: its `stopReason`, or its JSON-RPC
 * error answer (by code, else by its words).
 *
 * @module
 */

import type { CliFailure } from "./cli_profile.ts";

/**
 * How a prompt's `stopReason` ends the turn: `null` for a completion
 * (`end_turn`), else its failure. For `cancelled` that is `user_cancelled`:
 * the session handles a cancel of its own (an interrupt, a steer) before
 * it asks.
 *
 * @example Usage
 * ```ts
 * import { stopFailure } from "./_acp_failures.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(stopFailure("end_turn"), null);
 * assert.equal(stopFailure("refusal")?.kind, "guardrail_blocked");
 * ```
 */
export function stopFailure(stopReason: unknown): CliFailure | null {
  switch (stopReason) {
    case "end_turn":
      return null;
    case "refusal":
      return {
        kind: "guardrail_blocked",
        message: "the agent refused to go on (stopReason refusal)",
      };
    case "max_tokens":
      return {
        kind: "provider_runtime_claim",
        message: "the model reached its token limit (stopReason max_tokens)",
      };
    case "max_turn_requests":
      return {
        kind: "provider_runtime_claim",
        message:
          "the agent reached its limit of model requests in one turn (stopReason max_turn_requests)",
      };
    case "cancelled":
      return {
        kind: "user_cancelled",
        message: "the agent cancelled its prompt (stopReason cancelled)",
      };
    default:
      return {
        kind: "protocol_error",
        message: `the agent ended its prompt with an unknown stopReason ${
          JSON.stringify(stopReason ?? null)
        }`,
      };
  }
}

/** Error texts, in order; the first match wins. */
const ERROR_CLASSES: [RegExp, string][] = [
  [
    /\b401\b|\b403\b|UNAUTHENTICATED|PERMISSION_DENIED|API key|authenticat|auth(entication)? required|not logged in|\/login/i,
    "provider_auth_claim",
  ],
  [
    /\b429\b|RESOURCE_EXHAUSTED|rate.?limit|too many requests|quota/i,
    "provider_rate_limit",
  ],
  [
    /\b50[0-4]\b|\b529\b|overloaded|UNAVAILABLE|capacity|try again later/i,
    "provider_capacity",
  ],
  [
    /terminated|fetch failed|socket hang up|ECONNRESET|ECONNREFUSED|other side closed|disconnect/i,
    "transport_disconnect",
  ],
  [
    /\b400\b|\b404\b|INVALID_ARGUMENT|NOT_FOUND|not found|invalid/i,
    "provider_config_claim",
  ],
];

/** HTTP statuses an agent may use as its JSON-RPC error code (gemini does). */
function statusClass(code: number): string | null {
  if (code === 401 || code === 403) return "provider_auth_claim";
  if (code === 429) return "provider_rate_limit";
  if ([500, 502, 503, 504, 529].includes(code)) return "provider_capacity";
  if (code === 400 || code === 404) return "provider_config_claim";
  return null;
}

/**
 * The failure a `session/prompt` error answer means. ACP's
 * `-32000` is "authentication required"; gemini answers with the API's
 * HTTP status as the code; claude-code-acp wraps everything in `-32603`
 * (the words tell).
 *
 * @example Usage
 * ```ts
 * import { promptErrorFailure } from "./_acp_failures.ts";
 * import assert from "node:assert/strict";
 *
 * const failure = promptErrorFailure({ code: 429, message: "Rate limit exceeded." });
 * assert.equal(failure.kind, "provider_rate_limit");
 * ```
 */
export function promptErrorFailure(
  error: { code?: unknown; message: string },
): CliFailure {
  const code = typeof error.code === "number" ? error.code : 0;
  const message = error.message.slice(0, 2000) || "the prompt failed";
  if (code === -32000) return { kind: "provider_auth_claim", message };
  const byStatus = statusClass(code);
  if (byStatus !== null) return { kind: byStatus, message };
  const byWords = ERROR_CLASSES.find(([pattern]) => pattern.test(message));
  return { kind: byWords?.[1] ?? "provider_runtime_claim", message };
}
