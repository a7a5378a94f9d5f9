/**
 * The ACP lane's permission policy: whether the packet allows a tool of an
 * ACP kind (gemini by `agent.approval_mode`, acp by `agent.permissions`),
 * and the answer to `session/request_permission`.
 *
 * @module
 */

import { DEFAULT_ACP_PERMISSIONS } from "../packet/agent_options.ts";
import { isRecord } from "../shared/is_record.ts";

/** An offered permission option. */
export interface PermissionOption {
  /** `allow_once`, `allow_always`, `reject_once` or `reject_always`. */
  kind: string;
  /** What to answer to pick it. */
  optionId: string;
}

/**
 * Whether gemini's `agent.approval_mode` allows a tool of ACP kind `kind`,
 * by gemini's own semantics: reads, searches and thoughts are never asked
 * about in any mode; `auto_edit` adds edits (and deletes, moves); `yolo`
 * allows everything; `default` (or none) and `plan` refuse the rest.
 *
 * @example Usage
 * ```ts
 * import { geminiAllows } from "./_acp_policy.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(geminiAllows("auto_edit", "edit"), true);
 * assert.equal(geminiAllows("auto_edit", "execute"), false);
 * assert.equal(geminiAllows(null, "read"), true);
 * ```
 */
export function geminiAllows(mode: string | null, kind: string): boolean {
  if (mode === "yolo") return true;
  if (["read", "search", "think"].includes(kind)) return true;
  return mode === "auto_edit" && ["edit", "delete", "move"].includes(kind);
}

/**
 * Whether `agent.permissions` (else {@linkcode DEFAULT_ACP_PERMISSIONS})
 * allows a tool of ACP kind `kind`: a kind not named is denied.
 *
 * @example Usage
 * ```ts
 * import { acpAllows } from "./_acp_policy.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(acpAllows(null, "read"), true);
 * assert.equal(acpAllows(null, "edit"), false);
 * assert.equal(acpAllows({ edit: "allow" }, "edit"), true);
 * assert.equal(acpAllows({ edit: "allow" }, "read"), false);
 * ```
 */
export function acpAllows(
  permissions: Record<string, "allow" | "deny"> | null,
  kind: string,
): boolean {
  return (permissions ?? DEFAULT_ACP_PERMISSIONS)[kind] === "allow";
}

/**
 * The answer to `session/request_permission`: the offered option that
 * allows once (else always) when `allow`, else the one that rejects once
 * (else always); `cancelled` when no option fits.
 *
 * @example Usage
 * ```ts
 * import { permissionAnswer } from "./_acp_policy.ts";
 * import assert from "node:assert/strict";
 *
 * const options = [
 *   { optionId: "proceed_always", kind: "allow_always" },
 *   { optionId: "proceed_once", kind: "allow_once" },
 *   { optionId: "cancel", kind: "reject_once" },
 * ];
 * assert.deepEqual(permissionAnswer(options, false), {
 *   outcome: { outcome: "selected", optionId: "cancel" },
 * });
 * ```
 */
export function permissionAnswer(
  options: readonly PermissionOption[],
  allow: boolean,
): {
  outcome: { outcome: "selected"; optionId: string } | { outcome: "cancelled" };
} {
  const order = allow
    ? ["allow_once", "allow_always"]
    : ["reject_once", "reject_always"];
  for (const kind of order) {
    const option = options.find((o) => o.kind === kind);
    if (option) {
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    }
  }
  return { outcome: { outcome: "cancelled" } };
}

/** The offered permission options of a request (hostile input). */
export function permissionOptions(value: unknown): PermissionOption[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).flatMap((option) =>
    typeof option.kind === "string" && typeof option.optionId === "string"
      ? [{ kind: option.kind, optionId: option.optionId }]
      : []
  );
}
