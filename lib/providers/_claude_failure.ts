/**
 * Claude Code's errors, in the runner's failure classes: the `error` an API
 * error's `assistant` line carries (`SDKAssistantMessageError`), the HTTP
 * status and API error type beside it, a `result`'s `subtype`,
 * `terminal_reason` and `errors`, and what it prints on stderr when it
 * refuses its argv.
 *
 * @module
 */

import type { CliFailure } from "./cli_profile.ts";

/** What an `assistant` line with `error` said about an API failure. */
export interface ClaudeApiError {
  /** `assistant.error`: `authentication_failed`, `rate_limit`, `server_error`… */
  error: string;
  /** `api_error_status`, or `null` when no HTTP answer came. */
  status: number | null;
  /** `api_error_type`: `overloaded_error`, `rate_limit_error`… */
  type: string | null;
  /** The assistant text: the CLI's own words. */
  message: string;
}

const ERROR_CLASSES: Record<string, string> = {
  authentication_failed: "provider_auth_claim",
  oauth_org_not_allowed: "provider_auth_claim",
  account_on_hold: "provider_auth_claim",
  verification_required: "provider_auth_claim",
  billing_error: "provider_auth_claim",
  cloud_credential_error: "provider_auth_claim",
  rate_limit: "provider_rate_limit",
  overloaded: "provider_capacity",
  invalid_request: "provider_config_claim",
  model_not_found: "provider_config_claim",
  max_output_tokens: "provider_runtime_claim",
  server_error: "provider_runtime_claim",
};

const TYPE_CLASSES: Record<string, string> = {
  authentication_error: "provider_auth_claim",
  permission_error: "provider_auth_claim",
  rate_limit_error: "provider_rate_limit",
  overloaded_error: "provider_capacity",
  invalid_request_error: "provider_config_claim",
  not_found_error: "provider_config_claim",
  request_too_large: "provider_config_claim",
};

function statusClass(status: number | null): string | null {
  if (status === null) return null;
  if (status === 401 || status === 403) return "provider_auth_claim";
  if (status === 429) return "provider_rate_limit";
  if (status === 529 || status === 503) return "provider_capacity";
  if (status >= 400 && status < 500) return "provider_config_claim";
  return "provider_runtime_claim";
}

/**
 * The class of an API error. The CLI calls a 529 `server_error`, so the API
 * error type and the HTTP status are read before the CLI's own word; a lost
 * connection (no status) is a `transport_disconnect`, which a resume may
 * cure.
 */
export function apiErrorClass(api: ClaudeApiError): string {
  const byType = api.type === null ? undefined : TYPE_CLASSES[api.type];
  if (byType !== undefined) return byType;
  const byStatus = statusClass(api.status);
  if (byStatus !== null) return byStatus;
  if (/connection|ECONNRESET|socket|terminated/i.test(api.message)) {
    return "transport_disconnect";
  }
  return ERROR_CLASSES[api.error] ?? "provider_runtime_claim";
}

const LIMIT_SUBTYPES = new Set([
  "error_max_turns",
  "error_max_structured_output_retries",
]);
const LIMIT_REASONS = new Set([
  "max_turns",
  "prompt_too_long",
  "structured_output_retry_exhausted",
]);

/** The failure a `result` line reports, or `null` when it succeeded. */
export function resultFailure(
  result: Record<string, unknown>,
  api: ClaudeApiError | null,
): CliFailure | null {
  const subtype = typeof result.subtype === "string" ? result.subtype : "";
  const reason = typeof result.terminal_reason === "string"
    ? result.terminal_reason
    : "";
  const errors = Array.isArray(result.errors)
    ? result.errors.filter((e): e is string => typeof e === "string")
    : [];
  const text = typeof result.result === "string" ? result.result : "";
  const message = errors.join("; ") || text || api?.message ||
    `claude ended with ${subtype || "an error"}`;
  if (reason === "aborted_streaming" || reason === "aborted_tools") {
    return { kind: "user_cancelled", message: `Turn aborted (${reason})` };
  }
  if (result.is_error !== true && subtype === "success") {
    return deniedFailure(result.permission_denials);
  }
  const status = typeof result.api_error_status === "number"
    ? result.api_error_status
    : null;
  if (api !== null) {
    // 2.1.197 leaves the status off the assistant line but puts it here.
    const kind = apiErrorClass({ ...api, status: api.status ?? status });
    return { kind, message };
  }
  // Its own money ceiling: the runner's budget, passed on.
  if (subtype === "error_max_budget_usd" || reason === "budget_exhausted") {
    return { kind: "budget_exhausted", message };
  }
  // Limits the packet or the model sets: another try hits them again.
  if (LIMIT_SUBTYPES.has(subtype) || LIMIT_REASONS.has(reason)) {
    return { kind: "provider_config_claim", message };
  }
  if (/No conversation found with session ID/i.test(message)) {
    return { kind: "provider_config_claim", message };
  }
  return { kind: statusClass(status) ?? "provider_runtime_claim", message };
}

/**
 * A turn that ended well but had tools refused: an unattended run whose
 * permissions do not let the agent do its work.
 */
function deniedFailure(denials: unknown): CliFailure | null {
  if (!Array.isArray(denials) || denials.length === 0) return null;
  const names = denials.map((d) =>
    typeof d === "object" && d !== null &&
      typeof (d as Record<string, unknown>).tool_name === "string"
      ? (d as Record<string, unknown>).tool_name as string
      : "a tool"
  );
  return {
    kind: "approval_denied",
    message: `Claude Code was denied permission for ${
      [...new Set(names)].join(", ")
    }; allow it with agent.permission_mode or agent.allowed_tools`,
  };
}

const STDERR_CLASSES: [RegExp, string][] = [
  [/cannot be used with root\/sudo privileges/i, "provider_config_claim"],
  [
    /unknown option|argument '.*' is invalid|requires --verbose/i,
    "provider_config_claim",
  ],
  [/No conversation found with session ID/i, "provider_config_claim"],
  [/Invalid API key|Not logged in|authentication/i, "provider_auth_claim"],
];

/** The failure stderr names when the CLI ended without a `result`. */
export function stderrFailure(stderr: string[]): CliFailure | null {
  for (const line of stderr) {
    for (const [pattern, kind] of STDERR_CLASSES) {
      if (pattern.test(line)) return { kind, message: line.trim() };
    }
  }
  return null;
}
