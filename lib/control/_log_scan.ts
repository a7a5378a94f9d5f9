/**
 * What a plane opening needs from `log.jsonl`, read in one pass, in chunks,
 * parsing only the lines that can matter: the view changes this run id
 * applied, the steers accepted and never finished, and what was logged for
 * a few request ids. Nothing else is kept: receipts in `outcomes/` are the
 * record of what was decided.
 *
 * @module
 */

import { openExisting } from "../shared/files.ts";
import { parseViewSettings, type ViewSettings } from "../shared/view.ts";
import type { LogEntry, Outcome } from "./log_entry.ts";
import type { ControlPaths } from "./paths.ts";

/** What {@linkcode scanLog} found. */
export interface LogScan {
  /** The view changes `run_id` applied, merged in order. */
  view: Partial<ViewSettings>;
  /** Steers logged `accepted` with no final entry yet, by request id. */
  openSteers: Map<string, LogEntry>;
  /** The outcomes logged for each of the ids asked about. */
  logged: Map<string, Set<Outcome>>;
}

const CHUNK = 1024 * 1024;
const REQUEST_ID = /"request_id":"([^"\\]*)"/;
const OUTCOME = /"outcome":"([a-z]+)"/;

function isEntry(value: unknown): value is LogEntry {
  return typeof value === "object" && value !== null &&
    typeof (value as LogEntry).command === "string" &&
    typeof (value as LogEntry).outcome === "string";
}

/** Calls `each` for every complete line of a file read in chunks. */
async function forEachLine(
  file: Deno.FsFile,
  each: (line: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(CHUNK);
  let rest = "";
  for (;;) {
    const n = await file.read(buffer);
    if (n === null || n === 0) break;
    const text = rest + decoder.decode(buffer.subarray(0, n), { stream: true });
    let start = 0;
    for (
      let end = text.indexOf("\n");
      end >= 0;
      end = text.indexOf("\n", start)
    ) {
      each(text.slice(start, end));
      start = end + 1;
    }
    rest = text.slice(start);
  }
  // What follows the last newline is a torn line, never a complete entry.
}

/**
 * Reads the log once for a plane opening run `runId`.
 *
 * @param ids The request ids whose logged outcomes are wanted.
 * @param wantView Whether the run continues (its applied views are wanted).
 */
export async function scanLog(
  paths: ControlPaths,
  runId: string,
  ids: ReadonlySet<string>,
  wantView: boolean,
): Promise<LogScan> {
  const scan: LogScan = { view: {}, openSteers: new Map(), logged: new Map() };
  const file = await openExisting(paths.log, { within: paths.root });
  if (file === null) return scan;
  const view: Record<string, string> = {};
  const runKey = `"run_id":${JSON.stringify(runId)}`;
  const note = (entry: LogEntry): void => {
    const id = entry.request_id;
    if (id !== null && ids.has(id)) {
      const set = scan.logged.get(id) ?? new Set<Outcome>();
      set.add(entry.outcome);
      scan.logged.set(id, set);
    }
    if (entry.command === "steer" && id !== null) {
      if (entry.outcome === "accepted") scan.openSteers.set(id, entry);
      else if (entry.outcome === "applied" || entry.outcome === "rejected") {
        scan.openSteers.delete(id);
      }
    } else if (
      wantView && entry.command === "set_view" &&
      entry.outcome === "applied" && entry.run_id === runId
    ) {
      try {
        Object.assign(view, parseViewSettings(entry.params));
      } catch {
        // An applied view was valid when applied.
      }
    }
  };
  const parse = (line: string): void => {
    try {
      const entry = JSON.parse(line);
      if (isEntry(entry)) note(entry);
    } catch {
      // Not a log entry.
    }
  };
  try {
    await forEachLine(file, (line) => {
      if (!line.includes('"command":"')) {
        // Not written by this tool's writer: judged in full.
        if (line.includes("steer") || line.includes("set_view")) parse(line);
        return;
      }
      const steer = line.includes('"command":"steer"');
      if (steer) {
        // Most lines: read the two fields without parsing the line.
        const id = REQUEST_ID.exec(line)?.[1];
        const outcome = OUTCOME.exec(line)?.[1];
        if (id !== undefined && outcome !== undefined && !ids.has(id)) {
          if (outcome === "applied" || outcome === "rejected") {
            scan.openSteers.delete(id);
            return;
          }
          if (outcome !== "accepted") return;
        }
        parse(line);
        return;
      }
      if (
        (wantView && line.includes('"command":"set_view"') &&
          line.includes(runKey)) ||
        [...ids].some((id) => line.includes(id))
      ) parse(line);
    });
  } finally {
    file.close();
  }
  scan.view = view as Partial<ViewSettings>;
  return scan;
}
