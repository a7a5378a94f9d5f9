/**
 * Reads Claude Code's `--output-format stream-json` lines into canonical
 * events. Each `assistant` line carries one content block (thinking, text
 * or tool_use); `user` lines carry tool results; `result` ends a turn with
 * its usage, cost and outcome. The lines are hostile input: a field of the
 * wrong type is skipped, never trusted.
 *
 * @module
 */

import { count, type Fields, text as str } from "./_fields.ts";
import { failureEvents } from "./failure_events.ts";
import type {
  CliExit,
  CliFailure,
  CliParser,
  LineResult,
} from "./cli_profile.ts";
import {
  type ClaudeApiError,
  resultFailure,
  stderrFailure,
} from "./_claude_failure.ts";
import { isRecord } from "../shared/is_record.ts";
import type { EventData } from "../shared/events.ts";

/** The text of a tool result's `content` (a string or text blocks). */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => isRecord(part) ? str(part.text) ?? "" : "")
    .filter((text) => text !== "").join("\n");
}

/** The useful text of a tool's output. */
function toolOutput(block: Fields, structured: unknown): string {
  const text = contentText(block.content);
  if (text !== "") return text;
  if (typeof structured === "string") return structured;
  if (isRecord(structured)) {
    const out = [str(structured.stdout), str(structured.stderr)]
      .filter((s): s is string => s !== null && s !== "");
    if (out.length > 0) return out.join("\n");
  }
  return "";
}

/** A parser for one Claude Code process's stdout. */
export class ClaudeParser implements CliParser {
  readonly #tools = new Map<string, string>();
  #api: ClaudeApiError | null = null;
  #fatal = false;
  /** Totals at the last `result` (cumulative for this process). */
  #totals = { input: 0, output: 0 };
  /** Usage of each model message since the last `result`, by message id. */
  readonly #messages = new Map<string, { input: number; output: number }>();

  line(_text: string, json: unknown): LineResult {
    if (!isRecord(json)) return { events: [] };
    const result: LineResult = { events: [] };
    const session = str(json.session_id);
    // A lifecycle line comes before system/init on the live lane: the id is
    // taken from init, which names the model too (run_started carries both).
    if (
      session !== null && session !== "" && json.type !== "command_lifecycle"
    ) {
      result.session_id = session;
    }
    switch (json.type) {
      case "system":
        this.#system(json, result);
        break;
      case "assistant":
        this.#assistant(json, result);
        break;
      case "user":
        this.#user(json, result);
        break;
      case "result":
        this.#result(json, result);
        break;
    }
    return result;
  }

  exit(info: CliExit): CliFailure | null {
    if (info.sawTerminal || info.interrupted) return null;
    return stderrFailure(info.stderr);
  }

  #system(json: Fields, out: LineResult): void {
    if (json.subtype === "init") {
      const model = str(json.model);
      if (model !== null && model !== "") out.model = model;
      return;
    }
    if (
      json.subtype === "api_retry" && json.error === "authentication_failed"
    ) {
      this.#fatalAuth(
        out,
        `Authentication failed (HTTP ${
          count(json.error_status) || "error"
        }); Claude Code would retry ${count(json.max_retries)} times`,
      );
    }
  }

  #fatalAuth(out: LineResult, message: string): void {
    if (this.#fatal) return;
    this.#fatal = true;
    out.fatal = { kind: "provider_auth_claim", message };
  }

  #assistant(json: Fields, out: LineResult): void {
    const message = isRecord(json.message) ? json.message : {};
    const blocks = Array.isArray(message.content) ? message.content : [];
    const error = str(json.error);
    if (error !== null) {
      const text = blocks.map((b) => isRecord(b) ? str(b.text) ?? "" : "")
        .join("");
      this.#api = {
        error,
        status: typeof json.api_error_status === "number"
          ? json.api_error_status
          : null,
        type: str(json.api_error_type),
        message: text || error,
      };
      if (error === "authentication_failed") {
        this.#fatalAuth(out, text || error);
      }
      return;
    }
    this.#messageUsage(message, out);
    for (const block of blocks) {
      if (!isRecord(block)) continue;
      if (block.type === "thinking") {
        const thinking = str(block.thinking);
        if (thinking) {
          out.events.push({
            type: "message_streamed",
            data: { delta: thinking, kind: "thinking" },
          });
        }
      } else if (block.type === "text") {
        const text = str(block.text);
        if (text === null || text === "") continue;
        out.events.push(
          { type: "message_streamed", data: { delta: text, kind: "text" } },
          {
            type: "message_received",
            data: { content: text, role: "assistant" },
          },
        );
      } else if (block.type === "tool_use") {
        const id = str(block.id) ?? `tool_${this.#tools.size + 1}`;
        const name = str(block.name) ?? "unknown";
        this.#tools.set(id, name);
        out.events.push({
          type: "tool_call_started",
          data: {
            tool_call_id: id,
            tool_name: name,
            tool_input: isRecord(block.input) ? block.input : {},
          },
        });
      }
    }
  }

  #user(json: Fields, out: LineResult): void {
    const message = isRecord(json.message) ? json.message : {};
    if (json.isReplay === true) {
      // `--replay-user-messages`: a frame written to stdin, echoed as its
      // turn takes it; the echo is the steer's proof of delivery.
      const uuid = str(json.uuid);
      if (uuid !== null) out.echoed = uuid;
      return;
    }
    if (!Array.isArray(message.content)) return;
    for (const block of message.content) {
      if (!isRecord(block) || block.type !== "tool_result") continue;
      const id = str(block.tool_use_id) ?? "";
      const isError = block.is_error === true;
      out.events.push({
        type: isError ? "tool_call_failed" : "tool_call_completed",
        data: {
          tool_call_id: id,
          tool_name: this.#tools.get(id) ?? "unknown",
          tool_output: toolOutput(block, json.tool_use_result),
          is_error: isError,
        },
      });
    }
  }

  #result(json: Fields, out: LineResult): void {
    out.terminal = true;
    out.events.push({ type: "token_usage_updated", data: this.#tokens(json) });
    const failure = resultFailure(json, this.#api);
    this.#api = null;
    if (failure === null) {
      out.events.push({
        type: "run_completed",
        data: { stop_reason: str(json.stop_reason) ?? "end_turn" },
      });
    } else {
      out.events.push(...failureEvents("claude", failure));
    }
  }

  /**
   * A new model message reports its input tokens at once: running totals
   * while a long turn goes on (its output is counted at the `result`).
   */
  #messageUsage(message: Fields, out: LineResult): void {
    const id = str(message.id);
    if (id === null || this.#messages.has(id) || !isRecord(message.usage)) {
      return;
    }
    const usage = message.usage;
    this.#messages.set(id, {
      input: count(usage.input_tokens) +
        count(usage.cache_creation_input_tokens) +
        count(usage.cache_read_input_tokens),
      output: count(usage.output_tokens),
    });
    let input = this.#totals.input;
    let output = this.#totals.output;
    for (const each of this.#messages.values()) {
      input += each.input;
      output += each.output;
    }
    out.events.push({
      type: "token_usage_updated",
      data: {
        input_tokens: input,
        output_tokens: output,
        total_tokens: input + output,
      },
    });
  }

  /**
   * The process's totals at a `result`: `modelUsage` and `total_cost_usd`
   * are cumulative across the turns of one process; `usage` is per turn,
   * added to the last totals when `modelUsage` is missing.
   */
  #tokens(json: Fields): EventData<"token_usage_updated"> {
    const usage = isRecord(json.usage) ? json.usage : {};
    let input = this.#totals.input + count(usage.input_tokens) +
      count(usage.cache_creation_input_tokens) +
      count(usage.cache_read_input_tokens);
    let output = this.#totals.output + count(usage.output_tokens);
    if (isRecord(json.modelUsage) && Object.keys(json.modelUsage).length > 0) {
      input = 0;
      output = 0;
      for (const model of Object.values(json.modelUsage)) {
        if (!isRecord(model)) continue;
        input += count(model.inputTokens) + count(model.cacheReadInputTokens) +
          count(model.cacheCreationInputTokens);
        output += count(model.outputTokens);
      }
    }
    this.#totals = { input, output };
    this.#messages.clear();
    const data: EventData<"token_usage_updated"> = {
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
    };
    if (typeof json.total_cost_usd === "number") {
      data.cost_usd = json.total_cost_usd;
    }
    return data;
  }
}
