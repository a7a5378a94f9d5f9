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
 * - Usage: a prompt's answer carries it as `usage` (ACP, unstable) or
 *   `_meta.quota.token_count` (gemini); `usage_update` may carry the
 *   session's cost. `token_usage_updated` holds the attempt's running
 *   totals over all its prompts.
 *
 * @module
 */

import { count, type Fields, text } from "./_fields.ts";
import type { CliFailure } from "./cli_profile.ts";
import type { EventData, ProviderEvent } from "../shared/events.ts";
import { isRecord } from "../shared/is_record.ts";

/** The longest text kept in one `message_received` or tool output. */
const TEXT_CHARS = 1_000_000;

/** One file change a tool call carried, as `tool_input.changes` holds it. */
export interface AcpChange {
  /** The file (as the agent named it: usually absolute). */
  path: string;
  /** Its text before (`""` for a new file). */
  old_text: string;
  /** Its text after. */
  new_text: string;
}

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

interface ToolState {
  id: string;
  kind: string;
  title: string;
  raw: Fields;
  paths: string[];
  changes: AcpChange[];
  status: string;
  started: boolean;
  ended: boolean;
}

function record(value: unknown): Fields | null {
  return isRecord(value) ? value : null;
}

function clip(value: string): string {
  return value.length > TEXT_CHARS ? value.slice(0, TEXT_CHARS) : value;
}

/** Gemini's thought is `**subject**\ndescription`: an empty subject is noise. */
function thoughtText(value: string): string {
  return value.startsWith("****\n") ? value.slice(5) : value;
}

/** A text wrapped whole in one Markdown code fence, unwrapped. */
function unfence(value: string): string {
  const fenced = /^```[^\n]*\n([\s\S]*?)\n?```\s*$/.exec(value);
  return fenced ? fenced[1]! : value;
}

function contentList(value: unknown): Fields[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** The text of a tool call's `content` items (text blocks, terminals). */
function contentText(items: Fields[]): string {
  const parts: string[] = [];
  for (const item of items) {
    if (item.type === "content") {
      const block = record(item.content);
      const value = block?.type === "text" ? text(block.text) : null;
      if (value) parts.push(unfence(value));
    } else if (item.type === "terminal") {
      const id = text(item.terminalId);
      if (id) parts.push(`(terminal ${id})`);
    }
  }
  return parts.join("\n");
}

/** The output of a finished tool call: its raw output, else its content. */
function toolOutput(update: Fields): string {
  const raw = update.rawOutput;
  if (typeof raw === "string" && raw !== "") return clip(raw);
  const fromContent = contentText(contentList(update.content));
  if (fromContent !== "") return clip(fromContent);
  const fields = record(raw);
  if (fields !== null) {
    const said = [
      text(fields.output),
      text(fields.stdout),
      text(fields.stderr),
      text(fields.error),
    ].filter((part): part is string => part !== null && part !== "");
    if (said.length > 0) return clip(said.join("\n"));
  }
  if (Array.isArray(raw)) {
    const said = raw.map((part) => text(record(part)?.text) ?? "")
      .filter((part) => part !== "");
    if (said.length > 0) return clip(said.join("\n"));
  }
  return "";
}

function diffsOf(items: Fields[]): AcpChange[] {
  return items.filter((item) => item.type === "diff")
    .map((item) => ({
      path: text(item.path) ?? "",
      old_text: text(item.oldText) ?? "",
      new_text: text(item.newText) ?? "",
    }))
    .filter((change) => change.path !== "");
}

function locationPaths(value: unknown): string[] {
  return contentList(value).map((location) => text(location.path))
    .filter((path): path is string => path !== null && path !== "");
}

/** Whether an announced tool call says nothing yet (claude-code-acp's first). */
function bare(update: Fields): boolean {
  const raw = record(update.rawInput);
  return (raw === null || Object.keys(raw).length === 0) &&
    contentList(update.content).length === 0 &&
    locationPaths(update.locations).length === 0 &&
    (text(update.status) ?? "pending") === "pending";
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
        return [...this.flush(), ...this.#plan(update)];
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
      tool = {
        id,
        kind: "other",
        title: "",
        raw: {},
        paths: [],
        changes: [],
        status: "pending",
        started: false,
        ended: false,
      };
      this.#tools.set(id, tool);
      this.#order.push(tool);
    }
    const kind = text(update.kind);
    if (kind) tool.kind = kind;
    const title = text(update.title);
    if (title) tool.title = title;
    const raw = record(update.rawInput);
    if (raw !== null && Object.keys(raw).length > 0) tool.raw = raw;
    const paths = locationPaths(update.locations);
    if (paths.length > 0) tool.paths = [...new Set([...tool.paths, ...paths])];
    const changes = diffsOf(contentList(update.content));
    if (changes.length > 0) {
      // A later diff of the same file replaces the earlier (the announced
      // patch, then the applied one).
      const byPath = new Map(tool.changes.map((c) => [c.path, c]));
      for (const change of changes) byPath.set(change.path, change);
      tool.changes = [...byPath.values()];
    }
    const status = text(update.status);
    if (status && !tool.ended) tool.status = status;
    return tool;
  }

  #inputOf(tool: ToolState): Fields {
    const input: Fields = { ...tool.raw };
    if (tool.title) input.title = tool.title;
    const path = tool.paths[0] ?? tool.changes[0]?.path;
    if (path && text(input.file_path) === null && text(input.path) === null) {
      input.path = path;
    }
    if (tool.kind === "execute" && text(input.command) === null) {
      input.command = tool.title.replace(/^`(.*)`$/s, "$1");
    }
    return input;
  }

  #start(tool: ToolState): ProviderEvent {
    tool.started = true;
    return {
      type: "tool_call_started",
      data: {
        tool_call_id: tool.id,
        tool_name: tool.kind,
        tool_input: this.#inputOf(tool),
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
      data.tool_input = { ...this.#inputOf(tool), changes: tool.changes };
    }
    events.push({
      type: failed ? "tool_call_failed" : "tool_call_completed",
      data,
    });
    return events;
  }

  #plan(update: Fields): ProviderEvent[] {
    const items = contentList(update.entries).map((entry) => ({
      text: text(entry.content) ?? "",
      completed: entry.status === "completed",
      status: text(entry.status) ?? "pending",
      priority: text(entry.priority) ?? "medium",
    }));
    const id = `plan-${++this.#plans}`;
    const output = items.map((item) =>
      `[${
        item.completed ? "x" : item.status === "in_progress" ? "~" : " "
      }] ${item.text}`
    ).join("\n");
    return [
      {
        type: "tool_call_started",
        data: {
          tool_call_id: id,
          tool_name: "todo_list",
          tool_input: { items },
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

/**
 * How a prompt's `stopReason` ends the turn: `null` for a completion
 * (`end_turn`), else its failure. For `cancelled` that is `user_cancelled`:
 * the session handles a cancel of its own (an interrupt, a steer) before
 * it asks.
 *
 * @example Usage
 * ```ts
 * import { stopFailure } from "./_acp_updates.ts";
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
 * import { promptErrorFailure } from "./_acp_updates.ts";
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
