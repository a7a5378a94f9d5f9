/**
 * Codex app-server tool items (`commandExecution`, `fileChange`,
 * `mcpToolCall`, `dynamicToolCall`, `webSearch`): the name and input a call
 * starts with, and what it returned when it ends.
 *
 * @module
 */

import { type Fields, record, text } from "./_fields.ts";
import { fileChanges } from "./_codex_file_changes.ts";
import { isRecord } from "../shared/is_record.ts";

/** One tool call as the mapper tracks it. */
export interface ToolState {
  name: string;
  input: Fields;
  output: string;
  ended: boolean;
}

/** The text parts of an MCP result's or a user message's content. */
export function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => isRecord(part) ? text(part.text) ?? "" : "")
    .filter((part) => part !== "")
    .join("\n");
}

/** What a tool item is called and given, by item type; `null`: not a tool. */
export function toolStart(
  item: Fields,
): { name: string; input: Fields } | null {
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
export function toolEnd(
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
