/**
 * `log.jsonl`: the audit log of every command, accepted or refused.
 *
 * @module
 */

import { ensurePrivateDir, readStateText } from "../shared/files.ts";
import type { ControlPaths } from "./paths.ts";

/** How the plane answered a command. */
export type Outcome = "applied" | "accepted" | "rejected" | "received";

/** One line of the audit log. */
export interface LogEntry {
  /** The schema version. */
  v: 1;
  /** When the entry was written. */
  at: string;
  /** The run that decided it (`null` for an amendment made with no run recorded). */
  run_id: string | null;
  /** The request it answers (`null` for records not made from a request). */
  request_id: string | null;
  /** The command (`set_view`, `steer`, `amend`, `relax`), or `unparseable`/`unknown`. */
  command: string;
  /** The command's parameters as received (or `{file}` for unreadable requests). */
  params: Record<string, unknown>;
  /** Who asked, as they said. */
  author: string | null;
  /** The outcome. */
  outcome: Outcome;
  /** Why it was refused, or a note. */
  reason: string | null;
  /** The prompt current when it was written (or the one it targets). */
  prompt_id: string | null;
  /** The attempt current when it was written. */
  attempt: number | null;
  /**
   * The SHA-256 (hex) of the log's line before this one (its bytes, without
   * the newline); on the log's first line, of its own `run_id`. Absent on
   * lines written before the chain existed.
   */
  prev?: string;
}

/**
 * Parses the complete lines of a log text. A torn last line (a write in
 * progress, or a crash) and lines that are not log entries are skipped.
 */
export function parseLogLines(text: string): LogEntry[] {
  const entries: LogEntry[] = [];
  const lines = text.split("\n");
  lines.pop(); // Everything after the last newline is not a complete line.
  for (const line of lines) {
    try {
      const value = JSON.parse(line);
      if (
        typeof value === "object" && value !== null &&
        typeof value.command === "string" && typeof value.outcome === "string"
      ) {
        entries.push(value as LogEntry);
      }
    } catch {
      // Not a log entry.
    }
  }
  return entries;
}

/** Reads every entry of a state root's log (none when it does not exist). */
export async function readLogFile(paths: ControlPaths): Promise<LogEntry[]> {
  const text = await readStateText(paths.log, paths.root, {
    name: "the log",
    code: "LOG_UNREADABLE",
  });
  return text === null ? [] : parseLogLines(text);
}

/**
 * Appends an entry (synced) to a state root's log, chained to the line
 * before it (`prev`), making `control/` when it is missing. Never through
 * a link.
 */
export async function appendLogEntry(
  paths: ControlPaths,
  entry: Omit<LogEntry, "v" | "at" | "prev"> & { at?: string },
): Promise<LogEntry> {
  const { at, ...rest } = entry;
  const line: LogEntry = { v: 1, at: at ?? new Date().toISOString(), ...rest };
  const options = { within: paths.root };
  // Loaded by writers only: readers (control status, log) never hash.
  const { appendChainedLine } = await import("./append_chained_line.ts");
  try {
    return await appendChainedLine(paths.log, line, options);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    await ensurePrivateDir(paths.dir, options);
    return await appendChainedLine(paths.log, line, options);
  }
}
