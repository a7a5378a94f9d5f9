/**
 * Reads an ACP agent's `session/update` notifications (and the answer that
 * ends each `session/prompt`) into canonical events, the same shapes the
 * one-shot CLI parsers emit. Measured against `gemini --acp` 0.61.0 and
 * `@zed-industries/claude-code-acp` 0.16.2; the lines are hostile input: a
 * field of the wrong type reads as absent.
 *
 * - `agent_message_chunk` → `message_streamed {kind: "text"}`; the message
 *   ends (`message_received`) at the next update of another kind or at the
 *   prompt's end. `agent_thought_chunk` → `message_streamed {kind:
 *   "thinking"}`.
 * - A tool call is named by its ACP `kind` (`read`, `edit`, `delete`,
 *   `move`, `search`, `execute`, `think`, `fetch`, `switch_mode`, `other`):
 *   the one name every agent gives, where titles are prose ("Writing to
 *   a.txt") and tool names differ per agent. Its input is the agent's
 *   `rawInput` plus the `title`, the first location's `path` and, for
 *   `execute`, the `command`.
 * - claude-code-acp announces each tool twice (a bare `tool_call`, then one
 *   with the input): a bare call is held until the next update, so that
 *   `tool_call_started` carries the input.
 * - gemini sends no `tool_call` for a tool it asked permission for: the
 *   permission request (or the first update) starts it.
 * - `tool_call_update` with status `completed` or `failed` ends the call;
 *   its output is the agent's `rawOutput` text, else its content's text.
 *   Every `diff` content the call carried (`{path, oldText, newText}`, on
 *   the call or on an update) goes on the ending event as `tool_input.changes
 *   = [{path, old_text, new_text}]`: the patch is the tool's own.
 * - `plan` → a `todo_list` tool call (as Codex's todo lists): its items and a
 *   checklist as output, once per plan the agent sends.
 * - Tool calls are `_acp_tool_calls.ts`; a prompt's failures
 *   `_acp_failures.ts`.
 * - Usage: a prompt's answer carries it as `usage` (ACP, unstable) or
 *   `_meta.quota.token_count` (gemini); `usage_update` may carry the
 *   session's cost. `token_usage_updated` holds the attempt's running
 *   totals over all its prompts.
 *
 * @module
 */

import { count, type Fields, record, text, TEXT_CHARS } from "./_fields.ts";
import {
  bare,
  mergeToolUpdate,
  newToolState,
  planEvents,
  toolInput,
  toolOutput,
  type ToolState,
} from "./_acp_tool_calls.ts";
import type { EventData, ProviderEvent } from "../shared/events.ts";

export type { AcpChange } from "./_acp_tool_calls.ts";
export { promptErrorFailure, stopFailure } from "./_acp_failures.ts";

/** One tool call as the session saw it, for a steer's restated task. */
export interface AcpToolSeen {
  /** The ACP kind. */
  kind: string;
  /** The agent's title for it. */
  title: string;
  /** The files it touched. */
  paths: string[];
  /** `pending`, `in_progress`, `completed`, `failed` or `denied`. */
  status: string;
}

/** What the session saw done so far. */
export interface AcpProgress {
  /** The tool calls, in order. */
  tools: AcpToolSeen[];
  /** The agent's last whole message, or `null`. */
  last_message: string | null;
}

/** Gemini's thought is `**subject**\ndescription`: an empty subject is noise. */
function thoughtText(value: string): string {
  return value.startsWith("****\n") ? value.slice(5) : value;
}

/**
 * The canonical events of one ACP session's updates, and what it saw done
 * (for a steer that restates the task).
 *
 * @example Usage
 * ```ts
 * import { AcpUpdates } from "./_acp_updates.ts";
 * import assert from "node:assert/strict";
 *
 * const updates = new AcpUpdates();
 * const chunk = (text: string) => ({
 *   sessionId: "s1",
 *   update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
 * });
 * updates.update(chunk("Hello "));
 * updates.update(chunk("there."));
 * const events = updates.promptEnded({ stopReason: "end_turn" });
 * assert.deepEqual(events[0], {
 *   type: "message_received",
 *   data: { content: "Hello there.", role: "assistant" },
 * });
 * ```
 */
export class AcpUpdates {
  #text = "";
  #lastMessage: string | null = null;
  readonly #tools = new Map<string, ToolState>();
  readonly #order: ToolState[] = [];
  #plans = 0;
  #input = 0;
  #output = 0;
  #cost: number | null = null;

  /** The events of one `session/update` notification's params. */
  update(params: unknown): ProviderEvent[] {
    const update = record(record(params)?.update);
    const kind = update ? text(update.sessionUpdate) : null;
    if (update === null || kind === null) return [];
    switch (kind) {
      case "agent_message_chunk": {
        const chunk = this.#chunk(update);
        if (chunk === "") return [];
        const events = this.#flushHeld();
        if (this.#text.length < TEXT_CHARS) this.#text += chunk;
        events.push({
          type: "message_streamed",
          data: { delta: chunk, kind: "text" },
        });
        return events;
      }
      case "agent_thought_chunk": {
        const chunk = thoughtText(this.#chunk(update));
        if (chunk === "") return [];
        return [...this.flush(), {
          type: "message_streamed",
          data: { delta: chunk, kind: "thinking" },
        }];
      }
      case "tool_call":
      case "tool_call_update":
        return this.#tool(update);
      case "plan":
        return [
          ...this.flush(),
          ...planEvents(`plan-${++this.#plans}`, update),
        ];
      case "usage_update": {
        const cost = record(update.cost);
        if (cost === null || text(cost.currency)?.toUpperCase() !== "USD") {
          return [];
        }
        this.#cost = count(cost.amount);
        return [this.#usage()];
      }
      default:
        // user_message_chunk (an echo), available_commands_update,
        // current_mode_update, session_info_update…: nothing to show.
        return [];
    }
  }

  /**
   * A permission request for a tool call: starts the call when the session
   * has not yet (gemini asks before it announces).
   */
  permissionAsked(toolCall: unknown): ProviderEvent[] {
    const call = record(toolCall);
    const id = call ? text(call.toolCallId) : null;
    if (call === null || id === null) return this.flush();
    const events = this.#flushText();
    const tool = this.#merge(id, call);
    events.push(...this.#flushHeld());
    if (!tool.started) events.push(this.#start(tool));
    return events;
  }

  /** A permission the policy refused: the call fails as `approval_denied`. */
  denied(toolCall: unknown, reason: string): ProviderEvent[] {
    const events = this.permissionAsked(toolCall);
    const id = text(record(toolCall)?.toolCallId);
    const tool = id === null ? undefined : this.#tools.get(id);
    if (tool === undefined || tool.ended) return events;
    tool.status = "denied";
    tool.ended = true;
    events.push({
      type: "tool_call_failed",
      data: {
        tool_call_id: tool.id,
        tool_name: tool.kind,
        tool_output: `approval_denied: ${reason}`,
        is_error: true,
      },
    });
    return events;
  }

  /** The ACP kind of a permission request's tool call (`other` if unknown). */
  kindOf(toolCall: unknown): string {
    const call = record(toolCall);
    const kind = call ? text(call.kind) : null;
    if (kind) return kind;
    const id = call ? text(call.toolCallId) : null;
    return (id !== null ? this.#tools.get(id)?.kind : undefined) ?? "other";
  }

  /**
   * A `session/prompt` answered: the message in flight ends, held tool
   * calls start, and its usage joins the attempt's totals.
   */
  promptEnded(response: unknown): ProviderEvent[] {
    const events = this.flush();
    const answer = record(response) ?? {};
    const usage = record(answer.usage);
    const quota = record(record(record(answer._meta)?.quota)?.token_count);
    let input = 0;
    let output = 0;
    if (usage !== null) {
      input = count(usage.inputTokens);
      output = count(usage.outputTokens);
    } else if (quota !== null) {
      input = count(quota.input_tokens);
      output = count(quota.output_tokens);
    }
    if (input > 0 || output > 0) {
      this.#input += input;
      this.#output += output;
      events.push(this.#usage());
    }
    return events;
  }

  /** Ends the message in flight and starts the held tool calls. */
  flush(): ProviderEvent[] {
    return [...this.#flushText(), ...this.#flushHeld()];
  }

  /** What the session saw done so far. */
  progress(): AcpProgress {
    return {
      tools: this.#order.map((tool) => ({
        kind: tool.kind,
        title: tool.title,
        paths: [
          ...new Set([
            ...tool.paths,
            ...tool.changes.map((change) => change.path),
          ]),
        ],
        status: tool.status,
      })),
      last_message: this.#text !== "" ? this.#text : this.#lastMessage,
    };
  }

  #chunk(update: Fields): string {
    const content = record(update.content);
    return content?.type === "text" ? text(content.text) ?? "" : "";
  }

  #flushText(): ProviderEvent[] {
    if (this.#text === "") return [];
    const content = this.#text;
    this.#text = "";
    this.#lastMessage = content;
    return [{ type: "message_received", data: { content, role: "assistant" } }];
  }

  #flushHeld(): ProviderEvent[] {
    const events: ProviderEvent[] = [];
    for (const tool of this.#order) {
      if (!tool.started && !tool.ended) events.push(this.#start(tool));
    }
    return events;
  }

  #merge(id: string, update: Fields): ToolState {
    let tool = this.#tools.get(id);
    if (tool === undefined) {
      tool = newToolState(id);
      this.#tools.set(id, tool);
      this.#order.push(tool);
    }
    mergeToolUpdate(tool, update);
    return tool;
  }

  #start(tool: ToolState): ProviderEvent {
    tool.started = true;
    return {
      type: "tool_call_started",
      data: {
        tool_call_id: tool.id,
        tool_name: tool.kind,
        tool_input: toolInput(tool),
      },
    };
  }

  #tool(update: Fields): ProviderEvent[] {
    const id = text(update.toolCallId);
    if (id === null || id === "") return [];
    const events = this.#flushText();
    const known = this.#tools.get(id);
    if (known?.ended) return events;
    const tool = this.#merge(id, update);
    // Another call's update ends the wait of every held call.
    for (const other of this.#order) {
      if (other !== tool && !other.started && !other.ended) {
        events.push(this.#start(other));
      }
    }
    const status = text(update.status);
    const ending = status === "completed" || status === "failed";
    if (!tool.started && (ending || !bare(update) || known !== undefined)) {
      events.push(this.#start(tool));
    }
    if (!ending) return events;
    tool.ended = true;
    const failed = status === "failed";
    const data: EventData<"tool_call_completed"> = {
      tool_call_id: tool.id,
      tool_name: tool.kind,
      tool_output: toolOutput(update),
      is_error: failed,
    };
    if (tool.changes.length > 0) {
      data.tool_input = { ...toolInput(tool), changes: tool.changes };
    }
    events.push({
      type: failed ? "tool_call_failed" : "tool_call_completed",
      data,
    });
    return events;
  }

  #usage(): ProviderEvent {
    return {
      type: "token_usage_updated",
      data: {
        input_tokens: this.#input,
        output_tokens: this.#output,
        total_tokens: this.#input + this.#output,
        ...(this.#cost === null ? {} : { cost_usd: this.#cost }),
      },
    };
  }
}
