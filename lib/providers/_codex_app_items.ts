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

import { clip, count, type Fields, record, text } from "./_fields.ts";
import {
  contentText,
  toolEnd,
  toolStart,
  type ToolState,
} from "./_codex_tool_items.ts";
import { type TurnEnd, turnFailure } from "./_codex_turn_failure.ts";
import type { ProviderEvent } from "../shared/events.ts";
import { isRecord } from "../shared/is_record.ts";

export { fileChanges } from "./_codex_file_changes.ts";
export { type TurnEnd, turnFailure } from "./_codex_turn_failure.ts";

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
