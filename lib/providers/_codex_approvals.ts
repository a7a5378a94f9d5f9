/**
 * How the codex app-server lane answers server requests: every approval is
 * refused at once, from the packet's policy (see
 * {@linkcode codexApprovalAnswer}), and what a refusal was for, in words.
 *
 * @module
 */

import { text } from "./_fields.ts";
import { CODEX_DEFAULT_APPROVAL_POLICY } from "./codex.ts";
import type { AgentOptions } from "../packet/agent_options.ts";
import { isRecord } from "../shared/is_record.ts";

/** The server requests that ask for an approval, and what each refuses with. */
const APPROVALS: Record<string, unknown> = {
  "item/commandExecution/requestApproval": { decision: "decline" },
  "item/fileChange/requestApproval": { decision: "decline" },
  // Granting an empty profile grants nothing.
  "item/permissions/requestApproval": { permissions: {}, scope: "turn" },
  execCommandApproval: {
    decision: { denied: { rejection: "refused by the packet's policy" } },
  },
  applyPatchApproval: {
    decision: { denied: { rejection: "refused by the packet's policy" } },
  },
};

/**
 * The answer to a server request: an approval is refused (`decline`, an
 * empty permission grant, `denied`), with `approval: true`; any other
 * request is answered as codex reads "no" (an elicitation declined, no
 * answers to a question), or `null` when it is not one this client takes.
 *
 * Why every approval is refused: codex asks only when the packet's
 * `approval_policy` (`on-request`, `on-failure`, a granular policy) leaves
 * the decision to a person, and a run has no person at the console to ask.
 * Approving on the packet's behalf would let the agent do what its policy
 * withheld; leaving the request waiting would hang the run. So the answer
 * is the refusal the policy implies, given at once.
 *
 * @example Usage
 * ```ts
 * import { codexApprovalAnswer } from "./_codex_approvals.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(
 *   codexApprovalAnswer("item/fileChange/requestApproval"),
 *   { approval: true, result: { decision: "decline" } },
 * );
 * assert.equal(codexApprovalAnswer("account/chatgptAuthTokens/refresh"), null);
 * ```
 */
export function codexApprovalAnswer(
  method: string,
): { approval: boolean; result: unknown } | null {
  if (Object.hasOwn(APPROVALS, method)) {
    return { approval: true, result: APPROVALS[method] };
  }
  switch (method) {
    case "mcpServer/elicitation/request":
      return { approval: false, result: { action: "decline" } };
    case "item/tool/requestUserInput":
      return { approval: false, result: { answers: {} } };
    case "item/tool/call":
      return { approval: false, result: { contentItems: [], success: false } };
    default:
      return null;
  }
}

/** The approval policy codex runs with: `agent.config`'s, else the key's. */
export function approvalPolicy(options: AgentOptions): string {
  return String(
    options.config.approval_policy ?? options.approval_policy ??
      CODEX_DEFAULT_APPROVAL_POLICY,
  );
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

/** The tool an approval request is about, for a call codex never announced. */
export function approvalTool(
  method: string,
  params: unknown,
): { id: string; name: string; input: Record<string, unknown> } {
  const id = text(field(params, "itemId")) ?? text(field(params, "callId")) ??
    `approval-${crypto.randomUUID()}`;
  const command = field(params, "command");
  const commandText = Array.isArray(command)
    ? command.filter((part) => typeof part === "string").join(" ")
    : text(command) ?? "";
  if (method.includes("ommandExecution") || method === "execCommandApproval") {
    return { id, name: "command_execution", input: { command: commandText } };
  }
  if (method.includes("ileChange") || method === "applyPatchApproval") {
    const files = field(params, "fileChanges");
    const changes = isRecord(files)
      ? Object.keys(files).map((path) => ({ path, kind: "update", diff: "" }))
      : [];
    return { id, name: "file_change", input: { changes } };
  }
  return {
    id,
    name: "permissions",
    input: {
      permissions: field(params, "permissions") ?? null,
      reason: text(field(params, "reason")),
    },
  };
}

/** What an approval was for, in words. */
export function approvalWhat(
  tool: { name: string; input: Record<string, unknown> },
): string {
  if (tool.name === "command_execution") {
    return `the command ${JSON.stringify(tool.input.command ?? "")}`;
  }
  if (tool.name === "file_change" && Array.isArray(tool.input.changes)) {
    const paths = tool.input.changes.map((c) => text(field(c, "path")) ?? "")
      .filter(Boolean);
    return paths.length > 0
      ? `a change to ${paths.join(", ")}`
      : "a file change";
  }
  return tool.name === "permissions"
    ? "more permissions"
    : `the tool ${tool.name}`;
}
