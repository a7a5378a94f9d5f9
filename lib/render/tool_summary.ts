/**
 * How tool calls read to a person: one wording per tool kind, for the call
 * starting and for its result.
 *
 * @module
 */

import { duration } from "./duration.ts";
import {
  cut,
  field,
  flatten,
  plural,
  shortPath,
  size,
  splitLines,
} from "./_format.ts";
import type { FileChange } from "./diff.ts";

/** The kinds of tool the renderers word differently. */
export type ToolKind =
  | "bash"
  | "read"
  | "write"
  | "edit"
  | "grep"
  | "glob"
  | "file_change"
  | "other";

/** Classifies a tool by name. */
export function toolKind(name: string): ToolKind {
  switch (name.toLowerCase()) {
    case "bash":
    case "shell":
    case "command_execution":
    case "run_shell_command":
    case "execute": // an ACP tool kind
      return "bash";
    case "read":
    case "read_file":
    case "view_file":
      return "read";
    case "write":
    case "create_file":
    case "write_to_file":
    case "write_file":
      return "write";
    case "edit":
    case "multiedit":
    case "notebookedit":
    case "str_replace_editor":
    case "replace_file_content":
      return "edit";
    case "grep":
    case "search_file_content":
    case "search": // an ACP tool kind
      return "grep";
    case "glob":
    case "ls":
    case "find_files":
      return "glob";
    case "file_change":
    case "apply_patch":
    case "replace":
    case "delete": // ACP tool kinds
    case "move":
      return "file_change";
    default:
      return "other";
  }
}

function pathOf(input: Record<string, unknown> | undefined): string {
  return shortPath(
    field(input, "file_path", "path", "file", "TargetFile", "target_file") ??
      "a file",
  );
}

function changedPaths(input: Record<string, unknown> | undefined): string[] {
  const changes = input?.changes;
  if (!Array.isArray(changes)) return [pathOf(input)];
  return changes.map((change) =>
    typeof change === "object" && change !== null
      ? field(change as Record<string, unknown>, "path", "file_path") ?? "?"
      : "?"
  );
}

function command(input: Record<string, unknown> | undefined): string {
  const raw = input?.command ?? input?.cmd;
  const text = Array.isArray(raw)
    ? raw.join(" ")
    : typeof raw === "string"
    ? raw
    : "";
  return cut(flatten(text), 60);
}

/** What a person reads while a tool call runs: `Editing a.md`, `Running: make`. */
export function toolStartText(
  name: string,
  input: Record<string, unknown> | undefined,
): string {
  switch (toolKind(name)) {
    case "bash": {
      const cmd = command(input);
      return cmd ? `Running: ${cmd}` : "Running a command";
    }
    case "read":
      return `Reading ${pathOf(input)}`;
    case "write":
      return `Writing ${pathOf(input)}`;
    case "edit":
      return `Editing ${pathOf(input)}`;
    case "grep": {
      const pattern = field(input, "pattern", "query") ?? "";
      return `Searching "${cut(pattern, 40)}" in ${
        field(input, "path") ?? "."
      }`;
    }
    case "glob":
      return `Searching for ${field(input, "pattern", "glob") ?? "files"}`;
    case "file_change": {
      const paths = changedPaths(input);
      return paths.length === 1
        ? `Changing ${paths[0]}`
        : `Changing ${plural(paths.length, "file")}`;
    }
    default:
      return `Using ${name}`;
  }
}

/** The facts of a finished tool call. */
export interface ToolResult {
  /** The tool's name. */
  name: string;
  /** Its input. */
  input: Record<string, unknown> | undefined;
  /** Its output as text. */
  output: string;
  /** Whether it failed. */
  failed: boolean;
  /** Its exit code, when it reported one. */
  exit_code: number | null;
  /** How long it ran, when it reported it. */
  duration_ms: number | null;
  /** What it changed, when it changed a file. */
  change: FileChange | null;
}

function countLines(text: string): number {
  return splitLines(text).filter((line) => line.trim() !== "").length;
}

/**
 * The one-line summary of a finished tool call: `Edited a.md`, `Ran: make
 * (exit 0, 1.2k chars)`, `Read failed: a.md`. With `details` off (tool
 * output `none`) nothing taken from the output is shown.
 */
export function toolResultText(result: ToolResult, details: boolean): string {
  const { name, input, output, failed } = result;
  const path = pathOf(input);
  const extra: string[] = [];
  switch (toolKind(name)) {
    case "bash": {
      const code = result.exit_code ?? (failed ? 1 : 0);
      extra.push(`exit ${code}`);
      if (details && output) extra.push(size(output));
      if (result.duration_ms !== null && result.duration_ms > 2000) {
        extra.push(duration(result.duration_ms));
      }
      const cmd = command(input) || name;
      return `${failed ? "Command failed" : "Ran"}: ${cmd} (${
        extra.join(", ")
      })`;
    }
    case "read":
      return failed
        ? `Read failed: ${path}`
        : `Read ${path}${
          details && output ? ` (${plural(countLines(output), "line")})` : ""
        }`;
    case "write": {
      if (failed) return `Write failed: ${path}`;
      const content = typeof input?.content === "string" ? input.content : null;
      return `Wrote ${path}${
        content !== null
          ? ` (${plural(splitLines(content).length, "line")})`
          : ""
      }`;
    }
    case "edit":
      return failed ? `Edit failed: ${path}` : `Edited ${path}`;
    case "grep": {
      const pattern = field(input, "pattern", "query") ?? "";
      if (failed) return `Search failed: "${cut(pattern, 40)}"`;
      return details
        ? `Found ${plural(countLines(output), "match")} for "${
          cut(pattern, 40)
        }"`.replace("matchs", "matches")
        : `Searched for "${cut(pattern, 40)}"`;
    }
    case "glob": {
      const pattern = field(input, "pattern", "glob") ?? "*";
      if (failed) return `Search failed: ${pattern}`;
      return details
        ? `Found ${plural(countLines(output), "file")} matching ${pattern}`
        : `Searched for ${pattern}`;
    }
    case "file_change": {
      const paths = changedPaths(input);
      const what = paths.length === 1
        ? paths[0]!
        : `${plural(paths.length, "file")}: ${paths.join(", ")}`;
      return failed ? `Change failed: ${what}` : `Changed ${what}`;
    }
    default:
      return failed
        ? `${name} failed${details && output ? ` (${size(output)})` : ""}`
        : `${name} complete${details && output ? ` (${size(output)})` : ""}`;
  }
}
