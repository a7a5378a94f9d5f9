/**
 * Reads the Gemini CLI's `--output-format stream-json` lines (0.61.0):
 * `init`, `message` (user echo, assistant deltas), `tool_use`,
 * `tool_result`, `error` (a non-fatal warning) and `result` (the turn's
 * end, `status` `success` or `error`), and classifies its failures.
 *
 * The CLI does not put the model's thoughts in this stream, so it never
 * yields `thinking` deltas.
 *
 * @module
 */

import { count, record, text } from "./_fields.ts";
import type {
  CliExit,
  CliFailure,
  CliParser,
  LineResult,
} from "./cli_profile.ts";
import { failureEvents } from "./failure_events.ts";
import type { ProviderEvent } from "../shared/events.ts";

/** The longest CLI message kept in a failure. */
const MESSAGE_CHARS = 2000;

/** The longest text kept in one `message_received`. */
const TEXT_CHARS = 1_000_000;

/**
 * Failure classes by the CLI's `FatalError` exit code (a `result` line, when
 * there is one, says more). 41 auth, 42 bad input (an empty prompt, a
 * session `--resume` cannot find), 44 sandbox, 52 config, 53 the
 * `maxSessionTurns` setting, 54 a tool's fatal error, 55 untrusted folder,
 * 130 cancelled.
 */
const EXIT_CLASSES: Record<number, string> = {
  41: "provider_auth_claim",
  42: "provider_config_claim",
  44: "provider_config_claim",
  52: "provider_config_claim",
  53: "provider_runtime_claim",
  54: "provider_runtime_claim",
  55: "provider_config_claim",
  130: "user_cancelled",
};

/** `result.error.type` values (the CLI's error class names) worth a class. */
const TYPE_CLASSES: [RegExp, string][] = [
  [/Authentication/i, "provider_auth_claim"],
  [/Cancel/i, "user_cancelled"],
  [/TurnLimited|ToolExecution/i, "provider_runtime_claim"],
  [/Config|Input|Sandbox|Untrusted/i, "provider_config_claim"],
];

/** API error texts, in order; the first match wins. */
const MESSAGE_CLASSES: [RegExp, string][] = [
  [
    /UNAUTHENTICATED|\b401\b|API key not valid|Please set an Auth method|Invalid auth method|PERMISSION_DENIED|\b403\b/i,
    "provider_auth_claim",
  ],
  [
    /MODEL_CAPACITY_EXHAUSTED|exhausted your capacity|capacity exceeded/i,
    "provider_capacity",
  ],
  [
    /RESOURCE_EXHAUSTED|\b429\b|Resource has been exhausted|quota|rate.?limit|too many requests/i,
    "provider_rate_limit",
  ],
  [
    /\b50[0-4]\b|\b529\b|UNAVAILABLE|overloaded|INTERNAL|capacity|try again later/i,
    "provider_capacity",
  ],
  [
    /\bterminated\b|fetch failed|other side closed|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|socket hang up|premature close|UND_ERR/i,
    "transport_disconnect",
  ],
  [
    /INVALID_ARGUMENT|\b400\b|\b404\b|NOT_FOUND|not found|Error resuming session|Invalid session identifier/i,
    "provider_config_claim",
  ],
  [/max(imum)? session turns/i, "provider_runtime_claim"],
  [/cancell?ed/i, "user_cancelled"],
];

/** Stderr lines that say nothing about a failure. */
const NOISE =
  /^\s*(at\s|\[STARTUP\]|Warning: 256-color|Ripgrep is not available|YOLO mode is enabled|Loaded cached credentials|\}|\{)|^\s*$/;

/** Stderr lines that say what went wrong. */
const TELLING =
  /error|fail|invalid|please|denied|unauthori|not found|not running|exhausted|overloaded|terminated|closed/i;

// deno-lint-ignore no-control-regex -- the CLI colours some of its errors
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** The failure class an API error text means, or `null`. */
function classifyGeminiMessage(text: string): string | null {
  for (const [pattern, kind] of MESSAGE_CLASSES) {
    if (pattern.test(text)) return kind;
  }
  return null;
}

function clip(text: string): string {
  return text.length > MESSAGE_CHARS
    ? `${text.slice(0, MESSAGE_CHARS)}…`
    : text;
}

/** Stderr's lines that carry a message, ANSI colours removed. */
function stderrLines(stderr: string[]): string[] {
  return stderr
    .map((line) => line.replace(ANSI, "").trim())
    .filter((line) => !NOISE.test(line));
}

/** What stderr says, in a few lines: the ones naming an error, else the last. */
function stderrMessage(lines: string[]): string {
  const telling = lines.filter((line) => TELLING.test(line));
  return clip((telling.length > 0 ? telling : lines).slice(-4).join(" | "));
}

/** A `result{status:"error"}`'s failure. */
function resultFailure(error: unknown): CliFailure {
  const fields = record(error) ?? {};
  const type = text(fields.type) ?? "";
  const message = clip(
    text(fields.message) ?? "the Gemini CLI reported an error",
  );
  for (const [pattern, kind] of TYPE_CLASSES) {
    if (pattern.test(type)) return { kind, message };
  }
  return {
    kind: classifyGeminiMessage(message) ?? "provider_runtime_claim",
    message,
  };
}

/** The failure an exit without a `result` line means, or `null`. */
function exitFailure(
  info: CliExit,
  lastError: string | null,
): CliFailure | null {
  if (info.interrupted || info.sawTerminal) return null;
  const lines = stderrLines(info.stderr);
  const said = stderrMessage(lines);
  const message = [lastError, said].filter(Boolean).join(" | ") ||
    `the Gemini CLI exited with code ${info.code}`;
  const byCode = info.code === null ? undefined : EXIT_CLASSES[info.code];
  if (byCode !== undefined) {
    return { kind: byCode, message: clip(`exit ${info.code}: ${message}`) };
  }
  // An API error without a result line: the exit code is the HTTP status
  // mod 256 (401 → 145), and stderr quotes the API's error.
  const bySaid = classifyGeminiMessage(lines.join("\n"));
  if (bySaid !== null && info.code !== 0) {
    return { kind: bySaid, message: clip(`exit ${info.code}: ${message}`) };
  }
  return null;
}

/**
 * A parser for one Gemini CLI process.
 *
 * @example Usage
 * ```ts
 * import { GeminiParser } from "./_gemini_parser.ts";
 * import assert from "node:assert/strict";
 *
 * const parser = new GeminiParser();
 * const init = { type: "init", session_id: "s-1", model: "gemini-2.5-pro" };
 * assert.equal(parser.line(JSON.stringify(init), init).session_id, "s-1");
 * const result = {
 *   type: "result",
 *   status: "error",
 *   error: { type: "unknown", message: "[API Error: 429 RESOURCE_EXHAUSTED]" },
 * };
 * const { events, terminal } = parser.line(JSON.stringify(result), result);
 * assert.equal(terminal, true);
 * assert.equal(events.at(-1)?.type, "run_failed");
 * ```
 */
export class GeminiParser implements CliParser {
  #text = "";
  #failed = false;
  #lastError: string | null = null;
  readonly #toolNames = new Map<string, string>();

  /** @inheritdoc */
  line(_text: string, json: unknown): LineResult {
    const line = record(json);
    const type = line ? text(line.type) : null;
    if (line === null || type === null) return { events: [] };
    if (type === "message") return this.#message(line);
    const events = this.#flush();
    switch (type) {
      case "init": {
        const result: LineResult = { events };
        const id = text(line.session_id);
        const model = text(line.model);
        if (id) result.session_id = id;
        if (model) result.model = model;
        return result;
      }
      case "tool_use":
        events.push(this.#toolUse(line));
        return { events };
      case "tool_result":
        events.push(this.#toolResult(line));
        return { events };
      case "error": {
        // A warning (loop detected, turn limit, blocked, invalid stream):
        // the CLI goes on; the raw line stays in the transcript.
        const message = text(line.message);
        if (message) this.#lastError = clip(message);
        return { events };
      }
      case "result":
        return { events: [...events, ...this.#result(line)], terminal: true };
      default:
        return { events };
    }
  }

  /** @inheritdoc */
  exit(info: CliExit): CliFailure | null {
    if (this.#failed) return null;
    return exitFailure(info, this.#lastError);
  }

  #message(line: Record<string, unknown>): LineResult {
    const content = text(line.content);
    if (text(line.role) !== "assistant" || content === null) {
      return { events: [] };
    }
    if (line.delta === true) {
      if (this.#text.length < TEXT_CHARS) this.#text += content;
      if (content === "") return { events: [] };
      return {
        events: [{
          type: "message_streamed",
          data: { delta: content, kind: "text" },
        }],
      };
    }
    // A whole message (not a delta): it replaces what was streamed.
    this.#text = "";
    return {
      events: [{
        type: "message_received",
        data: { content, role: "assistant" },
      }],
    };
  }

  #flush(): ProviderEvent[] {
    if (this.#text === "") return [];
    const content = this.#text.slice(0, TEXT_CHARS);
    this.#text = "";
    return [{ type: "message_received", data: { content, role: "assistant" } }];
  }

  #toolUse(line: Record<string, unknown>): ProviderEvent {
    const id = text(line.tool_id) ?? "";
    const name = text(line.tool_name) ?? "unknown";
    if (id) this.#toolNames.set(id, name);
    return {
      type: "tool_call_started",
      data: {
        tool_call_id: id,
        tool_name: name,
        tool_input: record(line.parameters) ?? {},
      },
    };
  }

  #toolResult(line: Record<string, unknown>): ProviderEvent {
    const id = text(line.tool_id) ?? "";
    const name = this.#toolNames.get(id) ?? "unknown";
    this.#toolNames.delete(id);
    const failed = text(line.status) !== "success";
    const output = text(line.output) ??
      (failed ? text(record(line.error)?.message) : null) ?? "";
    return {
      type: failed ? "tool_call_failed" : "tool_call_completed",
      data: {
        tool_call_id: id,
        tool_name: name,
        tool_output: output,
        is_error: failed,
      },
    };
  }

  #result(line: Record<string, unknown>): ProviderEvent[] {
    const events: ProviderEvent[] = [];
    const stats = record(line.stats);
    if (stats !== null) {
      const input = count(stats.input_tokens);
      const output = count(stats.output_tokens);
      if (input > 0 || output > 0) {
        events.push({
          type: "token_usage_updated",
          data: {
            input_tokens: input,
            output_tokens: output,
            total_tokens: count(stats.total_tokens) || input + output,
          },
        });
      }
    }
    if (text(line.status) === "success") {
      events.push({ type: "run_completed", data: { stop_reason: "end_turn" } });
      return events;
    }
    this.#failed = true;
    const failure = resultFailure(line.error);
    return [...events, ...failureEvents("gemini", failure)];
  }
}
