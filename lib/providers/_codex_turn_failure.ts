/**
 * How a codex app-server turn ended, and the failure class of a failed one.
 *
 * @module
 */

import { count, record, text } from "./_fields.ts";
import { classifyCodexError } from "./_codex_parser.ts";
import type { CliFailure } from "./cli_profile.ts";
import { isRecord } from "../shared/is_record.ts";

/** How a turn ended, as `turn/completed` says. */
export type TurnEnd =
  | { status: "completed" }
  | { status: "interrupted" }
  | { status: "failed"; failure: CliFailure };

/**
 * The failure class of a failed turn's `error` (`{message, codexErrorInfo}`):
 * the HTTP status codex names first, then its error kind, then the words.
 *
 * @example Usage
 * ```ts
 * import { turnFailure } from "./_codex_turn_failure.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(
 *   turnFailure({
 *     message: "unexpected status 401 Unauthorized: Incorrect API key provided",
 *     codexErrorInfo: { httpConnectionFailed: { httpStatusCode: 401 } },
 *   }).kind,
 *   "provider_auth_claim",
 * );
 * ```
 */
export function turnFailure(error: unknown): CliFailure {
  const fields = record(error) ?? {};
  const details = text(fields.additionalDetails);
  const message = [text(fields.message) || "the codex turn failed", details]
    .filter(Boolean).join(": ");
  const info = fields.codexErrorInfo;
  const status = isRecord(info)
    ? Object.values(info).map((v) => count(record(v)?.httpStatusCode))
      .find((n) => n > 0)
    : undefined;
  if (status !== undefined) {
    return { kind: classifyCodexError(`status ${status}`), message };
  }
  if (isRecord(info) && "responseStreamDisconnected" in info) {
    return { kind: "transport_disconnect", message };
  }
  const byInfo: Record<string, string> = {
    unauthorized: "provider_auth_claim",
    rateLimitExceeded: "provider_rate_limit",
    usageLimitExceeded: "provider_rate_limit",
    serverOverloaded: "provider_capacity",
    internalServerError: "provider_capacity",
    contextWindowExceeded: "provider_config_claim",
    modelNotFound: "provider_config_claim",
    badRequest: "provider_config_claim",
  };
  const kind = typeof info === "string" ? byInfo[info] : undefined;
  return { kind: kind ?? classifyCodexError(message), message };
}
