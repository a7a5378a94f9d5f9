/**
 * Reading one run's audit log entries from the end of `log.jsonl`, so the
 * current run's few entries cost no more on a root with a long history than
 * on a fresh one.
 *
 * A run's entries are all written after its first event: a command can name
 * a run only once its snapshot is out, and a run continued under the same id
 * keeps (or gets back from the archive) its first event. So the lines older
 * than that start, by more than {@linkcode START_MARGIN_MS}, hold none of its
 * entries, and the scan stops at the first of them. When the start cannot be
 * told (no stream of the run's own, a stream of it left in the archive, an
 * entry of the run where none should be), the caller reads the whole log.
 *
 * @module
 */

import { checkPath } from "../shared/private_files.ts";
import { openExisting } from "../shared/open_file.ts";
import type { LogEntry } from "./log_entry.ts";
import { type ControlPaths, safeName } from "./paths.ts";

/**
 * How much older than the run's first event an entry of the run may be
 * stamped: an amendment is stamped before it waits for the prompt file
 * (30 s by default), and processes stamp entries a moment before they
 * append them.
 */
export const START_MARGIN_MS = 10 * 60_000;

const CHUNK_BYTES = 64 * 1024;

/** The time of the run's first event, or `null` when it cannot be told. */
async function runStart(
  paths: ControlPaths,
  runId: string,
): Promise<number | null> {
  // A stream of this run in the archive: it ran before another run took the
  // root, and its earlier entries lie anywhere.
  const archived = `${paths.archive}/${safeName(runId)}.jsonl`;
  if (await checkPath(paths.root, archived).catch(() => undefined) !== null) {
    return null;
  }
  const file = await openExisting(paths.events, { within: paths.root });
  if (file === null) return null;
  try {
    const buffer = new Uint8Array(CHUNK_BYTES);
    const n = await file.read(buffer);
    if (n === null) return null;
    const end = buffer.subarray(0, n).indexOf(0x0a);
    if (end < 0) return null;
    const first = JSON.parse(new TextDecoder().decode(buffer.subarray(0, end)));
    if (first?.run_id !== runId || typeof first.at !== "string") return null;
    const at = Date.parse(first.at);
    return Number.isFinite(at) ? at : null;
  } catch {
    return null;
  } finally {
    file.close();
  }
}

/** A parsed log entry, or `null` for a line that is not one. */
function parseEntry(text: string): LogEntry | null {
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null &&
        typeof value.command === "string" && typeof value.outcome === "string"
      ? value as LogEntry
      : null;
  } catch {
    return null;
  }
}

/**
 * A run's log entries, oldest first, read from the end of the log back to
 * the run's start: the same entries, in the same order, as reading every
 * line and keeping the run's.
 *
 * @returns The entries, or `null` when the run's start cannot be told and
 * the whole log must be read.
 */
export async function readRunLogFromTail(
  paths: ControlPaths,
  runId: string,
): Promise<LogEntry[] | null> {
  try {
    return await scan(paths, runId);
  } catch {
    // A link, an odd file, a log cut short meanwhile: the whole-log reader
    // says what is wrong, or reads what is there now.
    return null;
  }
}

async function scan(
  paths: ControlPaths,
  runId: string,
): Promise<LogEntry[] | null> {
  const start = await runStart(paths, runId);
  if (start === null) return null;
  const cutoff = start - START_MARGIN_MS;
  const file = await openExisting(paths.log, { within: paths.root });
  if (file === null) return [];
  try {
    const lines = new BackwardLines(file, (await file.stat()).size);
    // Per line, a byte order mark is kept as the whole-file reader keeps it:
    // only the file's first line loses one.
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    const firstDecoder = new TextDecoder();
    const found: LogEntry[] = [];
    for (let line; (line = await lines.previous()) !== null;) {
      const entry = parseEntry(
        (line.offset === 0 ? firstDecoder : decoder).decode(line.bytes),
      );
      if (entry === null) continue;
      const stamped = Date.parse(String(entry.at));
      if (Number.isFinite(stamped) && stamped < cutoff) {
        // Older than the run: the scan ends, unless this is the run's own,
        // which means its start was misjudged.
        return entry.run_id === runId ? null : found.reverse();
      }
      if (entry.run_id === runId) found.push(entry);
    }
    return found.reverse();
  } finally {
    file.close();
  }
}

/**
 * The complete lines of a file, last first, read in chunks from its end.
 * What follows the last newline is a torn line and is never returned.
 */
class BackwardLines {
  #file: Deno.FsFile;
  /** Bytes `[#from, #from + #buffer.length)` of the file. */
  #buffer = new Uint8Array(0);
  #from: number;
  /** Where the next line returned ends (past its newline). */
  #end: number | null = null;

  constructor(file: Deno.FsFile, size: number) {
    this.#file = file;
    this.#from = size;
  }

  /** The line before the last one returned, or `null` at the start. */
  async previous(): Promise<{ offset: number; bytes: Uint8Array } | null> {
    if (this.#end === null) {
      // The first call: find the end of the last complete line.
      const last = await this.#lastNewlineBefore(
        this.#from + this.#buffer.length,
      );
      this.#end = last + 1;
    }
    const end = this.#end;
    if (end <= 0) return null;
    const start = (await this.#lastNewlineBefore(end - 1)) + 1;
    this.#end = start;
    const bytes = this.#buffer.slice(start - this.#from, end - 1 - this.#from);
    // Keep only what lies before this line.
    this.#buffer = this.#buffer.subarray(0, start - this.#from);
    return { offset: start, bytes };
  }

  /** The offset of the last newline before `offset`, or -1. */
  async #lastNewlineBefore(offset: number): Promise<number> {
    for (;;) {
      if (offset > this.#from) {
        const at = this.#buffer.lastIndexOf(0x0a, offset - this.#from - 1);
        if (at >= 0) return this.#from + at;
      }
      if (this.#from === 0) return -1;
      await this.#readEarlier();
    }
  }

  async #readEarlier(): Promise<void> {
    const from = Math.max(0, this.#from - CHUNK_BYTES);
    const chunk = new Uint8Array(this.#from - from + this.#buffer.length);
    await this.#file.seek(from, Deno.SeekMode.Start);
    let read = 0;
    while (read < this.#from - from) {
      const n = await this.#file.read(
        chunk.subarray(read, this.#from - from),
      );
      if (n === null || n === 0) throw new Error("the log was cut short");
      read += n;
    }
    chunk.set(this.#buffer, this.#from - from);
    this.#buffer = chunk;
    this.#from = from;
  }
}
