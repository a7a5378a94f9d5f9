/**
 * Diffs for file-changing tool calls: the patch a tool call carries (Edit
 * old/new strings, MultiEdit edits, Write content), or, when the call names
 * only a path, the current `git diff` of that path, labelled as such.
 *
 * @module
 */

import { field, splitLines, truncatedMarker } from "./_format.ts";
import { paint } from "./ansi.ts";
import { isRecord } from "../shared/is_record.ts";

/** One line of a patch. */
export interface DiffLine {
  /** Kept, added or removed. */
  kind: "context" | "add" | "remove";
  /** The line's text. */
  text: string;
}

/** What a tool call says about the file it changes. */
export type FileChange =
  | {
    /** The call carries its own patch. */
    kind: "patch";
    /** The file. */
    path: string;
    /** The patch, in order. */
    lines: DiffLine[];
    /** Lines added. */
    added: number;
    /** Lines removed. */
    removed: number;
  }
  | {
    /** The call names only paths: its own change is unknown. */
    kind: "paths";
    /** The files. */
    paths: string[];
  };

/** At most this many body lines are shown; a cut always says so. */
export const BODY_LIMIT = 60;

const EDIT_TOOLS = [
  "Edit",
  "MultiEdit",
  "NotebookEdit",
  "edit",
  "str_replace_editor",
];
const WRITE_TOOLS = ["Write", "create_file", "write_to_file", "write_file"];
const PATH_ONLY_TOOLS = [
  "file_change",
  "replace_file_content",
  "apply_patch",
  "replace",
];
const LCS_LIMIT = 250_000;

/**
 * A line diff of two texts: common prefix and suffix kept as context, the
 * middle by longest common subsequence (or all-removed/all-added when it is
 * too large to compare).
 */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const lines: DiffLine[] = a.slice(0, start).map((text) => ({
    kind: "context",
    text,
  }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  if (midA.length * midB.length > LCS_LIMIT) {
    for (const text of midA) lines.push({ kind: "remove", text });
    for (const text of midB) lines.push({ kind: "add", text });
  } else {
    // table[i][j]: LCS length of midA[i:] and midB[j:].
    const table = Array.from(
      { length: midA.length + 1 },
      () => new Uint32Array(midB.length + 1),
    );
    for (let i = midA.length - 1; i >= 0; i--) {
      for (let j = midB.length - 1; j >= 0; j--) {
        table[i]![j] = midA[i] === midB[j]
          ? table[i + 1]![j + 1]! + 1
          : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < midA.length || j < midB.length) {
      if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
        lines.push({ kind: "context", text: midA[i]! });
        i++;
        j++;
      } else if (
        j >= midB.length ||
        (i < midA.length && table[i + 1]![j]! >= table[i]![j + 1]!)
      ) {
        lines.push({ kind: "remove", text: midA[i++]! });
      } else {
        lines.push({ kind: "add", text: midB[j++]! });
      }
    }
  }
  for (const text of a.slice(endA)) lines.push({ kind: "context", text });
  return lines;
}

function patch(path: string, lines: DiffLine[]): FileChange {
  return {
    kind: "patch",
    path,
    lines,
    added: lines.filter((l) => l.kind === "add").length,
    removed: lines.filter((l) => l.kind === "remove").length,
  };
}

/**
 * What a tool call's input says about the file it changes: its own patch
 * (Edit, MultiEdit, Write, a change list carrying diffs), only paths (Codex `file_change`, Antigravity
 * `replace_file_content`, an Edit without strings), or nothing.
 */
export function fileChangeOf(
  toolName: string,
  input: Record<string, unknown> | undefined,
): FileChange | null {
  if (!input) return null;
  const carried = carriedPatch(input.changes);
  if (carried !== null) return carried;
  const path = field(input, "file_path", "path", "TargetFile", "target_file");
  if (EDIT_TOOLS.includes(toolName)) {
    if (Array.isArray(input.edits) && path) {
      const lines: DiffLine[] = [];
      for (const edit of input.edits) {
        if (!isRecord(edit) || typeof edit.new_string !== "string") {
          return { kind: "paths", paths: [path] };
        }
        lines.push(...diffLines(
          typeof edit.old_string === "string" ? edit.old_string : "",
          edit.new_string,
        ));
      }
      return patch(path, lines);
    }
    if (typeof input.new_string === "string" && path) {
      return patch(
        path,
        diffLines(
          typeof input.old_string === "string" ? input.old_string : "",
          input.new_string,
        ),
      );
    }
    return path ? { kind: "paths", paths: [path] } : null;
  }
  if (WRITE_TOOLS.includes(toolName) && path) {
    return typeof input.content === "string"
      ? patch(path, diffLines("", input.content))
      : { kind: "paths", paths: [path] };
  }
  if (PATH_ONLY_TOOLS.includes(toolName)) {
    const paths = Array.isArray(input.changes)
      ? input.changes.map((c) =>
        isRecord(c) ? field(c, "path", "file_path") : undefined
      )
        .filter((p): p is string => p !== undefined)
      : path
      ? [path]
      : [];
    return paths.length ? { kind: "paths", paths } : null;
  }
  return null;
}

/**
 * The patch a change list carries in the event itself: Codex's
 * `fileChange.changes[].diff` (a unified diff) or an ACP agent's diff
 * content (`changes[].new_text`, with `old_text`). `null` when any change
 * names only its path. Several files make one patch, each file's lines
 * after a line naming it.
 */
function carriedPatch(changes: unknown): FileChange | null {
  if (!Array.isArray(changes) || changes.length === 0) return null;
  const files: { path: string; lines: DiffLine[] }[] = [];
  for (const change of changes) {
    if (!isRecord(change)) return null;
    const path = field(change, "path", "file_path");
    if (path === undefined) return null;
    if (typeof change.diff === "string") {
      files.push({ path, lines: unifiedLines(change.diff) });
    } else if (typeof change.new_text === "string") {
      const before = typeof change.old_text === "string" ? change.old_text : "";
      files.push({ path, lines: diffLines(before, change.new_text) });
    } else return null;
  }
  if (files.length === 1) return patch(files[0]!.path, files[0]!.lines);
  return patch(
    files.map((file) => file.path).join(", "),
    files.flatMap((file) => [
      { kind: "context" as const, text: `${file.path}:` },
      ...file.lines,
    ]),
  );
}

/**
 * A unified diff's lines; text without hunks (a new file's whole content,
 * as Codex gives it for an added file) is all added.
 */
function unifiedLines(text: string): DiffLine[] {
  if (/^@@/m.test(text)) return parseGitDiff(text);
  return splitLines(text).map((line) => ({ kind: "add", text: line }));
}

/** The stat suffix of a patch: `  +12 −3` (nothing for a path-only change). */
export function diffStat(change: FileChange | null): string {
  if (change === null || change.kind !== "patch") return "";
  if (change.added === 0 && change.removed === 0) return "";
  return `  +${change.added} \u2212${change.removed}`;
}

/** Renders patch lines, capped at {@linkcode BODY_LIMIT}, each on its own line. */
export function renderDiffBody(lines: DiffLine[], indent: string): string {
  const shown = lines.slice(0, BODY_LIMIT).map((line) => {
    const mark = line.kind === "add" ? "+" : line.kind === "remove" ? "-" : " ";
    const text = `${indent}${mark} ${line.text}`.trimEnd();
    return paint(
      text,
      line.kind === "add" ? "green" : line.kind === "remove" ? "red" : "dim",
    );
  });
  if (lines.length > BODY_LIMIT) {
    shown.push(
      paint(`${indent}${truncatedMarker(lines.length - BODY_LIMIT)}`, "dim"),
    );
  }
  return shown.map((line) => line + "\n").join("");
}

/**
 * Turns `git diff` output into patch lines: hunk bodies only (headers and
 * `@@` lines dropped).
 */
export function parseGitDiff(text: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let inHunk = false;
  for (const line of splitLines(text)) {
    if (line.startsWith("@@")) {
      inHunk = true;
      continue;
    }
    if (!inHunk || line.startsWith("\\")) continue;
    if (line.startsWith("diff --git")) {
      inHunk = false;
      continue;
    }
    const kind = line[0] === "+"
      ? "add"
      : line[0] === "-"
      ? "remove"
      : "context";
    lines.push({ kind, text: line.slice(1) });
  }
  return lines;
}
