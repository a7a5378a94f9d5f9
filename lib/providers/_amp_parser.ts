/**
 * Reads Amp's `--stream-json` output (Claude Code-compatible stream JSON)
 * into canonical events. The shapes come from Amp's "Streaming JSON" notes
 * and `@sourcegraph/amp-sdk`'s types; the live stream could not be captured
 * (the Amp server protocol is proprietary), so every field is checked
 * before use and a line that does not fit is skipped, never thrown on.
 *
 * @module
 */

import { count, text } from "./_fields.ts";
import type { ProviderEvent } from "../shared/events.ts";
import { classifyFailure } from "./failure.ts";
import { failureEvents } from "./failure_events.ts";
import type {
  CliExit,
  CliFailure,
  CliParser,
  LineResult,
} from "./cli_profile.ts";
import { isRecord } from "../shared/is_record.ts";

/** The first stdout line of Amp's interactive login flow (no API key). */
const LOGIN_FLOW = /^\s*No API key found\b/;

/** Known stderr texts (Amp exits 1 after printing one), first match wins. */
const STDERR_CLASSES: [RegExp, string][] = [
  [/Invalid or missing API key|No API key found/i, "provider_auth_claim"],
  [
    /Couldn't connect to the Amp server|Cannot reach Amp servers/i,
    "transport_disconnect",
  ],
  [
    /unknown option|Invalid thread URL or ID|requires --execute/i,
    "provider_config_claim",
  ],
];

type Json = Record<string, unknown>;

/** A thread id Amp may be resumed with (never one argv would read as a flag). */
function threadId(value: unknown): string | null {
  return typeof value === "string" && /^[^-\s][^\s]*$/.test(value)
    ? value
    : null;
}

/** A tool result's content: a string, or text blocks joined. */
function toolOutput(content: unknown): string {
  if (typeof content === "string") return content;
  if (content === undefined || content === null) return "";
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content
    .map((block) => isRecord(block) ? text(block.text) : text(block))
    .filter((part): part is string => part !== null)
    .join("\n");
}

/** The failure class of an Amp error text. */
export function classifyAmpError(message: string): string {
  for (const [pattern, kind] of STDERR_CLASSES) {
    if (pattern.test(message)) return kind;
  }
  return classifyFailure({ message }).failure_class;
}

/** Reads one Amp process's stdout. */
export class AmpParser implements CliParser {
  /** Token usage per model message (the lines of one message repeat it). */
  #usage = new Map<string, { input: number; output: number }>();
  #anonymousMessages = 0;
  #toolNames = new Map<string, string>();
  #stopReason: string | null = null;

  line(line: string, json: unknown): LineResult {
    if (json === undefined) {
      if (LOGIN_FLOW.test(line)) {
        return {
          events: [],
          fatal: { kind: "provider_auth_claim", message: line.trim() },
        };
      }
      return { events: [] };
    }
    if (!isRecord(json)) return { events: [] };
    switch (json.type) {
      case "system":
        return this.#system(json);
      case "assistant":
        return this.#assistant(json);
      case "user":
        return this.#user(json);
      case "result":
        return this.#result(json);
      default:
        return { events: [] };
    }
  }

  exit(info: CliExit): CliFailure | null {
    if (info.interrupted || info.sawTerminal) return null;
    for (const [pattern, kind] of STDERR_CLASSES) {
      const hit = info.stderr.find((line) => pattern.test(line));
      if (hit !== undefined) return { kind, message: hit.trim() };
    }
    return null;
  }

  #system(json: Json): LineResult {
    const result: LineResult = { events: [] };
    if (json.subtype !== "init") return result;
    const sessionId = threadId(json.session_id);
    if (sessionId) result.session_id = sessionId;
    const model = text(json.model);
    if (model) result.model = model;
    return result;
  }

  #assistant(json: Json): LineResult {
    const message = isRecord(json.message) ? json.message : {};
    const events: ProviderEvent[] = [];
    const blocks = Array.isArray(message.content) ? message.content : [];
    for (const block of blocks) {
      if (!isRecord(block)) continue;
      if (block.type === "thinking") {
        const thought = text(block.thinking);
        if (thought) {
          events.push({
            type: "message_streamed",
            data: { delta: thought, kind: "thinking" },
          });
        }
      } else if (block.type === "text") {
        const said = text(block.text);
        if (said) {
          events.push(
            { type: "message_streamed", data: { delta: said, kind: "text" } },
            {
              type: "message_received",
              data: { content: said, role: "assistant" },
            },
          );
        }
      } else if (block.type === "tool_use" && text(block.id)) {
        // Without an id no result can be paired with it: skipped.
        events.push(this.#toolStarted(block));
      }
    }
    const stop = text(message.stop_reason);
    if (stop) this.#stopReason = stop;
    const usage = this.#recordUsage(message);
    if (usage) events.push(usage);
    return { events };
  }

  #toolStarted(block: Json): ProviderEvent {
    const id = text(block.id)!;
    const name = text(block.name) || "unknown";
    this.#toolNames.set(id, name);
    return {
      type: "tool_call_started",
      data: {
        tool_call_id: id,
        tool_name: name,
        tool_input: isRecord(block.input) ? block.input : {},
      },
    };
  }

  /**
   * Each model message's usage counts once (Claude-style streams repeat it
   * on every line of the message); the event carries the process's running
   * total. Cache reads and writes count as input: the model read them.
   */
  #recordUsage(message: Json): ProviderEvent | null {
    if (!isRecord(message.usage)) return null;
    const usage = message.usage;
    const key = text(message.id) ?? `anonymous-${++this.#anonymousMessages}`;
    const next = {
      input: count(usage.input_tokens) +
        count(usage.cache_creation_input_tokens) +
        count(usage.cache_read_input_tokens),
      output: count(usage.output_tokens),
    };
    const previous = this.#usage.get(key) ?? { input: 0, output: 0 };
    if (previous.input === next.input && previous.output === next.output) {
      return null;
    }
    this.#usage.set(key, next);
    let input = 0;
    let output = 0;
    for (const each of this.#usage.values()) {
      input += each.input;
      output += each.output;
    }
    return {
      type: "token_usage_updated",
      data: {
        input_tokens: input,
        output_tokens: output,
        total_tokens: input + output,
      },
    };
  }

  #user(json: Json): LineResult {
    const message = isRecord(json.message) ? json.message : {};
    const blocks = Array.isArray(message.content) ? message.content : [];
    const events: ProviderEvent[] = [];
    for (const block of blocks) {
      if (!isRecord(block) || block.type !== "tool_result") continue;
      const id = text(block.tool_use_id);
      if (!id) continue;
      const failed = block.is_error === true;
      events.push({
        type: failed ? "tool_call_failed" : "tool_call_completed",
        data: {
          tool_call_id: id,
          tool_name: this.#toolNames.get(id) ?? "unknown",
          tool_output: toolOutput(block.content),
          is_error: failed,
        },
      });
    }
    return { events };
  }

  #result(json: Json): LineResult {
    const result: LineResult = { events: [], terminal: true };
    const sessionId = threadId(json.session_id);
    if (sessionId) result.session_id = sessionId;
    const failed = json.is_error === true ||
      (json.subtype !== undefined && json.subtype !== "success");
    if (!failed) {
      result.events.push({
        type: "run_completed",
        data: {
          stop_reason: this.#stopReason ?? "end_turn",
          ...(typeof json.num_turns === "number"
            ? { num_turns: json.num_turns }
            : {}),
          ...(typeof json.duration_ms === "number"
            ? { duration_ms: json.duration_ms }
            : {}),
        },
      });
      return result;
    }
    const errors = Array.isArray(json.errors)
      ? json.errors.filter((e): e is string => typeof e === "string")
      : [];
    const message = text(json.error) || errors.join("; ") ||
      text(json.result) ||
      `Amp ended the turn with "${text(json.subtype) ?? "an error"}"`;
    result.events.push(
      ...failureEvents("amp", { kind: classifyAmpError(message), message }),
    );
    return result;
  }
}
