/**
 * The tool calls of an ACP session's updates: what one call holds, its
 * input, its output and the file changes it carried, and a `plan` as a
 * `todo_list` call. Hostile input: a field of the wrong type reads as
 * absent.
 *
 * @module
 */

import { clip, type Fields, record, text } from "./_fields.ts";
import type { ProviderEvent } from "../shared/events.ts";
import { isRecord } from "../shared/is_record.ts";

/** One file change a tool call carried, as `tool_input.changes` holds it. */
export interface AcpChange {
  /** The file (as the agent named it: usually absolute). */
  path: string;
  /** Its text before (`""` for a new file). */
  old_text: string;
  /** Its text after. */
  new_text: string;
}

/** One tool call as the session tracks it. */
export interface ToolState {
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
export function toolOutput(update: Fields): string {
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
export function bare(update: Fields): boolean {
  const raw = record(update.rawInput);
  return (raw === null || Object.keys(raw).length === 0) &&
    contentList(update.content).length === 0 &&
    locationPaths(update.locations).length === 0 &&
    (text(update.status) ?? "pending") === "pending";
}

/** A tool call not seen before. */
export function newToolState(id: string): ToolState {
  return {
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
}

/** Folds one announcement or update of a tool call into what it holds. */
export function mergeToolUpdate(tool: ToolState, update: Fields): void {
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
}

/** A tool call's `tool_input`: its raw input, title, path and command. */
export function toolInput(tool: ToolState): Fields {
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

/** A `plan` update as a `todo_list` tool call `id`, started and completed. */
export function planEvents(id: string, update: Fields): ProviderEvent[] {
  const items = contentList(update.entries).map((entry) => ({
    text: text(entry.content) ?? "",
    completed: entry.status === "completed",
    status: text(entry.status) ?? "pending",
    priority: text(entry.priority) ?? "medium",
  }));
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
