/**
 * Reads `codex exec --json` stdout (0.171.0): one JSON event per line,
 * `thread.started`, `turn.started`, `item.started/updated/completed`,
 * `error`, `turn.completed` and `turn.failed`, into canonical events.
 *
 * Codex's `error` lines and `error` items are not terminal: it reports its
 * own reconnects and warnings that way and goes on. They yield no event
 * (the runner takes the first `error_occurred` as the attempt's failure);
 * the last one is kept to explain a `turn.failed` without a message, or an
 * exit without a terminal line.
 *
 * @module
 */

import { count, text } from "./_fields.ts";
import { failureEvents } from "./failure_events.ts";
import type { ProviderEvent } from "../shared/events.ts";
import type {
  CliExit,
  CliFailure,
  CliParser,
  LineResult,
} from "./cli_profile.ts";
import { isRecord } from "../shared/is_record.ts";

type Json = Record<string, unknown>;

const CLASSES: [RegExp, string][] = [
  [
    /\b401\b|\b403\b|unauthori[sz]ed|forbidden|api key|authenticat|not logged in/i,
    "provider_auth_claim",
  ],
  [
    /\b429\b|too many requests|rate.?limit|quota|usage limit/i,
    "provider_rate_limit",
  ],
  [
    /\b5(?:00|02|03|04|29)\b|overloaded|at capacity|high demand|unavailable|server error/i,
    "provider_capacity",
  ],
  [
    /stream disconnected|disconnect|connection (?:reset|refused|closed)|error sending request|network|transport error|idle timeout|timed out/i,
    "transport_disconnect",
  ],
  [
    /\b400\b|\b404\b|bad request|invalid|unsupported|not supported|not found|does not exist|context window|no rollout found|unexpected argument|config/i,
    "provider_config_claim",
  ],
];

/**
 * The failure class of a Codex error message (`unexpected status 401
 * Unauthorized: …` → `provider_auth_claim`): the HTTP status Codex names
 * first, else the words. The request URL Codex appends is ignored, so that
 * a port number is never read as a status.
 */
export function classifyCodexError(message: string): string {
  const words = message.replace(/\burl:\s*\S+/gi, "");
  const status = Number(/\bstatus:?\s*(\d{3})\b/i.exec(words)?.[1] ?? 0);
  if (status === 401 || status === 403) return "provider_auth_claim";
  if (status === 429) return "provider_rate_limit";
  if ([500, 502, 503, 504, 529].includes(status)) return "provider_capacity";
  if (status === 400 || status === 404 || status === 422) {
    return "provider_config_claim";
  }
  return CLASSES.find(([pattern]) => pattern.test(words))?.[1] ??
    "provider_runtime_claim";
}

function codexFailure(kind: string, message: string): ProviderEvent[] {
  return failureEvents("codex", { kind, message });
}

/** What a tool item is called and given, by item type. */
function toolStart(item: Json): { name: string; input: Json } | null {
  switch (item.type) {
    case "command_execution":
      return {
        name: "command_execution",
        input: { command: text(item.command) ?? "" },
      };
    case "file_change": {
      const changes = Array.isArray(item.changes)
        ? item.changes.filter(isRecord).map((change) => ({
          path: text(change.path) ?? "",
          kind: text(change.kind) ?? "update",
        }))
        : [];
      return { name: "file_change", input: { changes } };
    }
    case "mcp_tool_call": {
      const server = text(item.server) ?? "unknown";
      const tool = text(item.tool) ?? "unknown";
      return {
        name: `mcp__${server}__${tool}`,
        input: isRecord(item.arguments) ? item.arguments : {},
      };
    }
    case "web_search":
      return { name: "web_search", input: { query: text(item.query) ?? "" } };
    case "todo_list":
      return {
        name: "todo_list",
        input: { items: Array.isArray(item.items) ? item.items : [] },
      };
    default:
      return null;
  }
}

function mcpOutput(item: Json): string {
  if (isRecord(item.error)) return text(item.error.message) ?? "failed";
  const result = isRecord(item.result) ? item.result : {};
  if (!Array.isArray(result.content)) return "";
  return result.content
    .map((part) => isRecord(part) ? text(part.text) ?? "" : "")
    .filter((part) => part !== "")
    .join("\n");
}

/** What a finished tool item returned, and whether it failed. */
function toolEnd(item: Json): { output: string; error: boolean } {
  const status = text(item.status);
  const failed = status === "failed" || status === "declined";
  switch (item.type) {
    case "command_execution": {
      const code = item.exit_code;
      return {
        output: text(item.aggregated_output) ?? "",
        error: failed || (typeof code === "number" && code !== 0),
      };
    }
    case "file_change": {
      const changes = Array.isArray(item.changes) ? item.changes : [];
      const output = changes.filter(isRecord)
        .map((change) =>
          `${text(change.kind) ?? "update"} ${text(change.path) ?? ""}`
        )
        .join("\n");
      return { output, error: failed };
    }
    case "mcp_tool_call":
      return { output: mcpOutput(item), error: failed || isRecord(item.error) };
    default:
      return { output: "", error: failed };
  }
}

let parsers = 0;

/** A parser for one `codex exec --json` process. */
export function codexParser(): CliParser {
  // Codex numbers items per process (`item_0`…): a resumed process starts
  // again, so ids get a prefix unique to this process.
  const prefix = `codex${++parsers}${Date.now().toString(36)}`;
  const started = new Map<string, string>();
  let lastError: string | null = null;

  const item = (kind: string, value: Json): ProviderEvent[] => {
    const id = text(value.id) ?? `anon${started.size}`;
    const callId = `${prefix}-${id}`;
    if (value.type === "agent_message") {
      const message = text(value.text) ?? "";
      if (kind !== "item.completed" || message === "") return [];
      return [
        { type: "message_streamed", data: { delta: message, kind: "text" } },
        {
          type: "message_received",
          data: { content: message, role: "assistant" },
        },
      ];
    }
    if (value.type === "reasoning") {
      const thought = text(value.text) ?? "";
      if (kind !== "item.completed" || thought === "") return [];
      return [{
        type: "message_streamed",
        data: { delta: thought, kind: "thinking" },
      }];
    }
    if (value.type === "error") {
      lastError = text(value.message) ?? lastError;
      return [];
    }
    const start = toolStart(value);
    if (start === null) return [];
    const events: ProviderEvent[] = [];
    if (!started.has(id)) {
      started.set(id, start.name);
      events.push({
        type: "tool_call_started",
        data: {
          tool_call_id: callId,
          tool_name: start.name,
          tool_input: start.input,
        },
      });
    }
    if (kind === "item.completed") {
      const end = toolEnd(value);
      started.delete(id);
      events.push({
        type: end.error ? "tool_call_failed" : "tool_call_completed",
        data: {
          tool_call_id: callId,
          tool_name: start.name,
          tool_output: end.output,
          is_error: end.error,
        },
      });
    }
    return events;
  };

  return {
    line(_text: string, json: unknown): LineResult {
      if (!isRecord(json)) return { events: [] };
      switch (json.type) {
        case "thread.started": {
          const id = text(json.thread_id);
          return id ? { events: [], session_id: id } : { events: [] };
        }
        case "item.started":
        case "item.updated":
        case "item.completed":
          return {
            events: isRecord(json.item) ? item(json.type, json.item) : [],
          };
        case "error":
          lastError = text(json.message) ?? lastError;
          return { events: [] };
        case "turn.completed": {
          const usage = isRecord(json.usage) ? json.usage : {};
          const input = count(usage.input_tokens);
          const output = count(usage.output_tokens);
          return {
            events: [
              {
                type: "token_usage_updated",
                data: {
                  input_tokens: input,
                  output_tokens: output,
                  total_tokens: input + output,
                },
              },
              { type: "run_completed", data: { stop_reason: "end_turn" } },
            ],
            terminal: true,
          };
        }
        case "turn.failed": {
          const error = isRecord(json.error) ? json.error : {};
          const message = text(error.message) || lastError || "turn failed";
          return {
            events: codexFailure(classifyCodexError(message), message),
            terminal: true,
          };
        }
        default:
          return { events: [] };
      }
    },
    exit(info: CliExit): CliFailure | null {
      if (info.sawTerminal || info.interrupted) return null;
      const said = info.stderr.find((line) =>
        /no rollout found|unexpected argument|Not inside a trusted directory|Error loading config/i
          .test(line)
      );
      if (said !== undefined) {
        return { kind: "provider_config_claim", message: said.trim() };
      }
      if (lastError !== null) {
        const kind = classifyCodexError(lastError);
        if (
          kind === "provider_auth_claim" || kind === "provider_rate_limit" ||
          kind === "provider_capacity"
        ) {
          return { kind, message: lastError };
        }
      }
      return null;
    },
  };
}
