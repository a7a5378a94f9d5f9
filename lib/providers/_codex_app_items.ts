/**
 * Reads `codex app-server` notifications (0.171.0, JSON-RPC on stdio) into
 * canonical events, the same shapes `_codex_parser.ts` emits for
 * `codex exec --json`. The notifications are hostile input: a field of the
 * wrong type reads as absent.
 *
 * - `item/agentMessage/delta` → `message_streamed {kind: "text"}`; the
 *   completed `agentMessage` item → `message_received`.
 *   `item/reasoning/summaryTextDelta` → `message_streamed {kind:
 *   "thinking"}`. An item completed without deltas streams its whole text.
 * - Tool items: `commandExecution` → `command_execution` (`{command}`; the
 *   completion carries the output and `exit_code`), `fileChange` →
 *   `file_change` whose `tool_input.changes` is `[{path, kind, diff}]` with
 *   codex's own unified diff, on the start and on the completion (the
 *   renderer reads the patch there), `mcpToolCall` → `mcp__server__tool`,
 *   `dynamicToolCall` → its tool's name, `webSearch` → `web_search`.
 *   `turn/plan/updated` → a `todo_list` call per plan, as the ACP lane does.
 * - `thread/tokenUsage/updated` → `token_usage_updated`, the running totals
 *   of this process's turns only: a resumed thread first reports the totals
 *   of its history (under an earlier turn's id), which are the baseline.
 * - `userMessage` items, `turn/started` and `turn/completed` are handed to
 *   the session (a steer's echo, the turn's outcome), not turned into
 *   events.
 * - `error` with `willRetry` (codex reconnecting) is a transcript note; a
 *   final one is followed by `turn/completed` with status `failed`, which
 *   carries the same error.
 *
 * @module
 */

import { count, type Fields, text } from "./_fields.ts";
import { classifyCodexError } from "./_codex_parser.ts";
import type { CliFailure } from "./cli_profile.ts";
import type { ProviderEvent } from "../shared/events.ts";
import { isRecord } from "../shared/is_record.ts";

/** The longest text kept in one message or tool output. */
const TEXT_CHARS = 1_000_000;

/** How a turn ended, as `turn/completed` says. */
export type TurnEnd =
  | { status: "completed" }
  | { status: "interrupted" }
  | { status: "failed"; failure: CliFailure };

/** What one notification told the mapper. */
export interface AppStep {
  /** Canonical events (never `run_started`: the core emits it). */
  events: ProviderEvent[];
  /** A line for the attempt's transcript. */
  note?: string;
  /** A `userMessage` item started: the user input codex took into a turn. */
  userMessage?: { clientId: string | null; text: string };
  /** `turn/started`: the turn's id. */
  turnStarted?: string;
  /** `turn/completed`: the turn's id and how it ended. */
  turnEnded?: { turnId: string; end: TurnEnd };
}

interface ToolState {
  name: string;
  input: Fields;
  output: string;
  ended: boolean;
}

function record(value: unknown): Fields | null {
  return isRecord(value) ? value : null;
}

function clip(value: string): string {
  return value.length > TEXT_CHARS ? value.slice(0, TEXT_CHARS) : value;
}

/** A `fileChange`'s changes as `tool_input.changes` holds them. */
export function fileChanges(value: unknown): Fields[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((change) => {
    const kind = record(change.kind);
    const movedTo = kind ? text(kind.move_path) : null;
    return {
      path: text(change.path) ?? "",
      kind: (kind ? text(kind.type) : text(change.kind)) ?? "update",
      diff: text(change.diff) ?? "",
      ...(movedTo ? { move_path: movedTo } : {}),
    };
  });
}

function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => isRecord(part) ? text(part.text) ?? "" : "")
    .filter((part) => part !== "")
    .join("\n");
}

/** What a tool item is called and given, by item type; `null`: not a tool. */
function toolStart(item: Fields): { name: string; input: Fields } | null {
  switch (item.type) {
    case "commandExecution":
      return {
        name: "command_execution",
        input: { command: text(item.command) ?? "" },
      };
    case "fileChange":
      return {
        name: "file_change",
        input: { changes: fileChanges(item.changes) },
      };
    case "mcpToolCall":
      return {
        name: `mcp__${text(item.server) ?? "unknown"}__${
          text(item.tool) ?? "unknown"
        }`,
        input: record(item.arguments) ?? {},
      };
    case "dynamicToolCall": {
      const tool = text(item.tool) ?? "unknown";
      const namespace = text(item.namespace);
      return {
        name: namespace ? `${namespace}__${tool}` : tool,
        input: record(item.arguments) ?? {},
      };
    }
    case "webSearch":
      return { name: "web_search", input: { query: text(item.query) ?? "" } };
    default:
      return null;
  }
}

/** What a finished tool item returned, and whether it failed. */
function toolEnd(
  item: Fields,
  state: ToolState,
): { output: string; error: boolean; extra: Fields } {
  const status = text(item.status);
  const failed = status === "failed" || status === "declined";
  switch (item.type) {
    case "commandExecution": {
      const code = typeof item.exitCode === "number" ? item.exitCode : null;
      return {
        output: text(item.aggregatedOutput) ?? state.output,
        error: failed || (code !== null && code !== 0),
        extra: { exit_code: code },
      };
    }
    case "fileChange": {
      const changes = fileChanges(item.changes);
      const input = changes.length > 0 ? { changes } : state.input;
      const output = (input.changes as Fields[])
        .map((change) => `${change.kind} ${change.path}`)
        .join("\n");
      return { output, error: failed, extra: { tool_input: input } };
    }
    case "mcpToolCall": {
      const error = record(item.error);
      return {
        output: error
          ? text(error.message) ?? "failed"
          : contentText(record(item.result)?.content),
        error: failed || error !== null,
        extra: {},
      };
    }
    case "dynamicToolCall":
      return {
        output: contentText(item.contentItems),
        error: failed || item.success === false,
        extra: {},
      };
    default:
      return { output: "", error: failed, extra: {} };
  }
}

/**
 * The failure class of a failed turn's `error` (`{message, codexErrorInfo}`):
 * the HTTP status codex names first, then its error kind, then the words.
 *
 * @example Usage
 * ```ts
 * import { turnFailure } from "./_codex_app_items.ts";
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

/** The user input a `userMessage` item holds, as one text. */
function userText(item: Fields): string {
  return contentText(item.content);
}

/**
 * The state of one app-server process's notifications: what each call
 * started with, which messages streamed, the token baseline.
 *
 * @example Usage
 * ```ts
 * import { CodexAppItems } from "./_codex_app_items.ts";
 * import assert from "node:assert/strict";
 *
 * const items = new CodexAppItems();
 * const step = items.notification("item/agentMessage/delta", {
 *   itemId: "msg_1",
 *   delta: "Hello",
 * });
 * assert.deepEqual(step.events, [
 *   { type: "message_streamed", data: { delta: "Hello", kind: "text" } },
 * ]);
 * ```
 */
export class CodexAppItems {
  readonly #tools = new Map<string, ToolState>();
  /** Items whose text streamed as deltas (their completion adds none). */
  readonly #streamed = new Set<string>();
  /** The summary part each reasoning item streamed last. */
  readonly #parts = new Map<string, number>();
  /** The turns this process ran: only their usage counts. */
  readonly #turns = new Set<string>();
  #baseline = { input: 0, output: 0 };
  #plans = 0;

  /** A turn this process started (`turn/start`'s answer). */
  ownTurn(turnId: string): void {
    this.#turns.add(turnId);
  }

  /** One notification from the app-server. */
  notification(method: string, params: unknown): AppStep {
    const p = record(params) ?? {};
    switch (method) {
      case "item/agentMessage/delta":
        return { events: this.#delta(p, "text") };
      case "item/reasoning/summaryTextDelta":
        return { events: this.#delta(p, "thinking") };
      case "item/commandExecution/outputDelta": {
        const tool = this.#tools.get(text(p.itemId) ?? "");
        if (tool) tool.output = clip(tool.output + (text(p.delta) ?? ""));
        return { events: [] };
      }
      case "item/started":
        return this.#item(record(p.item), false);
      case "item/completed":
        return this.#item(record(p.item), true);
      case "turn/plan/updated":
        return { events: this.#plan(p) };
      case "thread/tokenUsage/updated":
        return { events: this.#usage(p) };
      case "turn/started": {
        const id = text(record(p.turn)?.id);
        if (id === null) return { events: [] };
        this.#turns.add(id);
        return { events: [], turnStarted: id };
      }
      case "turn/completed":
        return this.#turnCompleted(record(p.turn));
      case "error": {
        const error = record(p.error);
        const message = text(error?.message) ?? "an error";
        return {
          events: [],
          note: p.willRetry === true
            ? `[prompt_runner] codex will retry: ${message}`
            : `[prompt_runner] codex error: ${message}`,
        };
      }
      case "warning":
      case "configWarning":
      case "deprecationNotice":
      case "guardianWarning": {
        const said = text(p.message) ?? text(p.summary);
        return said === null
          ? { events: [] }
          : { events: [], note: `[prompt_runner] codex ${method}: ${said}` };
      }
      case "model/rerouted":
        return {
          events: [],
          note: `[prompt_runner] codex model/rerouted: ${JSON.stringify(p)}`,
        };
      default:
        return { events: [] };
    }
  }

  /**
   * A request the packet's policy refused, because of `options.reason`:
   * the call it was for fails at once as `approval_denied` (started first,
   * as `options.tool`, if codex had not announced it), and its later
   * completion adds nothing.
   */
  denied(
    itemId: string,
    options: { reason: string; tool: { name: string; input: Fields } },
  ): ProviderEvent[] {
    const { reason } = options;
    const events: ProviderEvent[] = [];
    let tool = this.#tools.get(itemId);
    if (tool === undefined) {
      tool = { ...options.tool, output: "", ended: false };
      this.#tools.set(itemId, tool);
      events.push({
        type: "tool_call_started",
        data: {
          tool_call_id: itemId,
          tool_name: tool.name,
          tool_input: tool.input,
        },
      });
    }
    if (tool.ended) return events;
    tool.ended = true;
    events.push({
      type: "tool_call_failed",
      data: {
        tool_call_id: itemId,
        tool_name: tool.name,
        tool_output: `approval_denied: ${reason}`,
        is_error: true,
        error_code: "approval_denied",
      },
    });
    return events;
  }

  /** The name and input codex announced for an item, if it did. */
  toolOf(itemId: string): { name: string; input: Fields } | null {
    const tool = this.#tools.get(itemId);
    return tool ? { name: tool.name, input: tool.input } : null;
  }

  #delta(p: Fields, kind: "text" | "thinking"): ProviderEvent[] {
    let delta = text(p.delta) ?? "";
    const id = text(p.itemId) ?? "";
    if (kind === "thinking") {
      const part = count(p.summaryIndex);
      const last = this.#parts.get(id);
      if (last !== undefined && last !== part && delta !== "") {
        delta = `\n\n${delta}`;
      }
      this.#parts.set(id, part);
    }
    if (delta === "") return [];
    this.#streamed.add(id);
    return [{ type: "message_streamed", data: { delta, kind } }];
  }

  #item(item: Fields | null, completed: boolean): AppStep {
    if (item === null) return { events: [] };
    const id = text(item.id) ?? "";
    switch (item.type) {
      case "userMessage":
        return completed ? { events: [] } : {
          events: [],
          userMessage: { clientId: text(item.clientId), text: userText(item) },
        };
      case "agentMessage": {
        const message = clip(text(item.text) ?? "");
        if (!completed || message === "") return { events: [] };
        const events: ProviderEvent[] = [];
        if (!this.#streamed.delete(id)) {
          events.push({
            type: "message_streamed",
            data: { delta: message, kind: "text" },
          });
        }
        events.push({
          type: "message_received",
          data: { content: message, role: "assistant" },
        });
        return { events };
      }
      case "reasoning": {
        this.#parts.delete(id);
        if (!completed || this.#streamed.delete(id)) return { events: [] };
        const summary = Array.isArray(item.summary)
          ? item.summary.filter((s): s is string => typeof s === "string")
          : [];
        const thought = summary.join("\n\n");
        return thought === "" ? { events: [] } : {
          events: [{
            type: "message_streamed",
            data: { delta: thought, kind: "thinking" },
          }],
        };
      }
    }
    const start = toolStart(item);
    if (start === null) return { events: [] };
    const events: ProviderEvent[] = [];
    let tool = this.#tools.get(id);
    if (tool === undefined) {
      tool = { ...start, output: "", ended: false };
      this.#tools.set(id, tool);
      events.push({
        type: "tool_call_started",
        data: {
          tool_call_id: id,
          tool_name: start.name,
          tool_input: start.input,
        },
      });
    }
    if (completed && !tool.ended) {
      tool.ended = true;
      const end = toolEnd(item, tool);
      events.push({
        type: end.error ? "tool_call_failed" : "tool_call_completed",
        data: {
          tool_call_id: id,
          tool_name: tool.name,
          tool_output: clip(end.output),
          is_error: end.error,
          ...end.extra,
        },
      });
    }
    return { events };
  }

  #plan(p: Fields): ProviderEvent[] {
    const steps = Array.isArray(p.plan) ? p.plan.filter(isRecord) : [];
    const items = steps.map((step) => ({
      text: text(step.step) ?? "",
      completed: step.status === "completed",
      status: text(step.status) ?? "pending",
    }));
    const id = `plan-${++this.#plans}`;
    const output = items.map((item) =>
      `[${
        item.completed ? "x" : item.status === "inProgress" ? "~" : " "
      }] ${item.text}`
    ).join("\n");
    const explanation = text(p.explanation);
    return [
      {
        type: "tool_call_started",
        data: {
          tool_call_id: id,
          tool_name: "todo_list",
          tool_input: { items, ...(explanation ? { explanation } : {}) },
        },
      },
      {
        type: "tool_call_completed",
        data: {
          tool_call_id: id,
          tool_name: "todo_list",
          tool_output: output,
          is_error: false,
        },
      },
    ];
  }

  #usage(p: Fields): ProviderEvent[] {
    const total = record(record(p.tokenUsage)?.total) ?? {};
    const input = count(total.inputTokens);
    const output = count(total.outputTokens);
    if (!this.#turns.has(text(p.turnId) ?? "")) {
      // A resumed thread's history: what earlier processes already reported.
      this.#baseline = { input, output };
      return [];
    }
    const ownInput = Math.max(0, input - this.#baseline.input);
    const ownOutput = Math.max(0, output - this.#baseline.output);
    return [{
      type: "token_usage_updated",
      data: {
        input_tokens: ownInput,
        output_tokens: ownOutput,
        total_tokens: ownInput + ownOutput,
      },
    }];
  }

  #turnCompleted(turn: Fields | null): AppStep {
    const id = text(turn?.id);
    if (turn === null || id === null) return { events: [] };
    const status = text(turn.status);
    const end: TurnEnd = status === "failed"
      ? { status: "failed", failure: turnFailure(turn.error) }
      : status === "interrupted"
      ? { status: "interrupted" }
      : { status: "completed" };
    return { events: [], turnEnded: { turnId: id, end } };
  }
}
