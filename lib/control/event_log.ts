/**
 * `events.jsonl`, writer side: which run's stream it is (another run's is
 * archived byte for byte, this run's continues after a torn tail is cut),
 * and appends: one synchronous write per event, synced to disk before
 * every snapshot that names it.
 *
 * @module
 */

import { basename } from "node:path";
import { eventJson } from "../shared/event_json.ts";
import type { RunEvent, RunStatus } from "../shared/events.ts";
import {
  anchored,
  checkPath,
  ensurePrivateDir,
  openAppend,
  openExisting,
  repairTornTail,
  syncDir,
} from "../shared/files.ts";
import { errorKind, type PlaneContext } from "./_plane_context.ts";
import { safeName } from "./paths.ts";
import { errorText } from "../shared/errors.ts";

const encoder = new TextEncoder();
/**
 * Past the first few events of a millisecond, an event waits for the batch:
 * written when the millisecond is up, at 64 KiB, or before anything that
 * names a `seq` (the snapshot, a log entry, a new attempt, the end of the
 * run).
 */
const BATCH_MS = 1;
/** Events written one by one within a millisecond before batching starts. */
const BATCH_AFTER = 4;
const BATCH_BYTES = 64 * 1024;

function stamp(): string {
  return new Date().toISOString().replace(/[-:.]/g, "");
}

/** The event stream of one run. */
export class EventLog {
  readonly #ctx: PlaneContext;
  #file: Deno.FsFile | null = null;
  #pending: string[] = [];
  #pendingBytes = 0;
  #windowStart = -Infinity;
  #windowWrites = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** The last `seq` found in the stream when it was adopted. */
  lastSeq = 0;
  /** The status of a `run_finished` that ends the adopted stream, if one does. */
  finished: RunStatus | null = null;

  constructor(ctx: PlaneContext) {
    this.#ctx = ctx;
  }

  /**
   * Makes `events.jsonl` this run's stream: the run's own stream continues
   * (from the file, or brought back from the archive), another run's is
   * moved to the archive. Who owns the file is read from its first event,
   * so a lost or foreign snapshot cannot split a run's stream.
   *
   * @returns Whether this run id already had a stream (it continues).
   */
  async adopt(previousRun: string | null): Promise<boolean> {
    const ctx = this.#ctx;
    const paths = ctx.paths;
    const present = await ctx.guard(() => checkPath(paths.root, paths.events));
    if (present !== null) {
      const owner = (await this.#owner()) ?? previousRun;
      if (owner === ctx.runId) {
        await this.#reopen();
        return true;
      }
      await this.#archive(owner);
    }
    const archived = `${safeName(ctx.runId)}.jsonl`;
    const restored = anchored(paths.root, paths.archive, (here) => {
      if (here.lstat(archived) === null) return false;
      // Back to control/events.jsonl, from control/events/.
      here.rename(archived, `../${basename(paths.events)}`);
      return true;
    });
    if (restored) {
      await syncDir(paths.dir);
      await this.#reopen();
      return true;
    }
    return false;
  }

  /** Opens the stream for appending. */
  async open(): Promise<void> {
    const ctx = this.#ctx;
    this.#file = await ctx.guard(
      () => openAppend(ctx.paths.events, ctx.within),
      ctx.paths.dir,
    );
  }

  /**
   * Appends one event. Writes are synchronous (one `write(2)` into the page
   * cache, no round trip through the thread pool). An event after a quiet
   * spell is in the file when this returns; while events flow faster than
   * 4 a millisecond they are written a batch at a time, at most a
   * millisecond late. Nothing names an event (snapshot, log entry) before
   * it is written, so a crash loses only events nobody has seen.
   */
  append(event: RunEvent): void {
    if (this.#file === null) return;
    const line = eventJson(event) + "\n";
    // The wall clock's millisecond: no call into the runtime, as
    // performance.now() makes (a clock step only shortens a window).
    const now = Date.now();
    if (now - this.#windowStart >= BATCH_MS || now < this.#windowStart) {
      this.#windowStart = now;
      this.#windowWrites = 0;
    }
    if (this.#pending.length === 0 && this.#windowWrites < BATCH_AFTER) {
      this.#windowWrites++;
      this.#write(line);
      return;
    }
    // Events are flowing fast: one write per batch, within a millisecond.
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (this.#pendingBytes >= BATCH_BYTES) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), BATCH_MS);
  }

  /** Writes the events held for the current batch. */
  flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#pending.length === 0) return;
    const text = this.#pending.join("");
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#write(text);
  }

  #write(text: string): void {
    if (this.#file === null) return;
    const bytes = encoder.encode(text);
    try {
      let done = 0;
      while (done < bytes.length) {
        done += this.#file.writeSync(bytes.subarray(done));
      }
    } catch (error) {
      this.#ctx.warn(
        `events:${errorKind(error)}`,
        `cannot append events: ${errorText(error)}`,
      );
    }
  }

  /** Writes the batch and syncs the stream to disk. */
  async sync(): Promise<void> {
    this.flush();
    await this.#file?.sync();
  }

  /** Writes, syncs and closes the stream (a failing sync is ignored). */
  async close(): Promise<void> {
    try {
      await this.sync();
    } catch {
      // The environment is failing: nothing more to save.
    }
    this.flush();
    this.#file?.close();
    this.#file = null;
  }

  /** The run id of the first event in `events.jsonl`, or `null`. */
  async #owner(): Promise<string | null> {
    const ctx = this.#ctx;
    const file = await openExisting(ctx.paths.events, ctx.within);
    if (file === null) return null;
    try {
      const buffer = new Uint8Array(64 * 1024);
      const n = await file.read(buffer);
      if (n === null) return null;
      const text = new TextDecoder().decode(buffer.subarray(0, n));
      const end = text.indexOf("\n");
      if (end < 0) return null;
      const runId = JSON.parse(text.slice(0, end)).run_id;
      return typeof runId === "string" ? runId : null;
    } catch {
      return null;
    } finally {
      file.close();
    }
  }

  /** Moves the previous run's events aside, byte for byte. */
  async #archive(previousRun: string | null): Promise<void> {
    const ctx = this.#ctx;
    const paths = ctx.paths;
    const base = safeName(previousRun ?? `unknown-${stamp()}`);
    const events = basename(paths.events);
    const archive = basename(paths.archive);
    await ensurePrivateDir(paths.archive, ctx.within);
    anchored(paths.root, paths.dir, (here) => {
      for (let n = 0;; n++) {
        const name = n === 0 ? `${base}.jsonl` : `${base}-${n}.jsonl`;
        if (here.lstat(`${archive}/${name}`) !== null) continue;
        here.rename(events, `${archive}/${name}`);
        return;
      }
    });
    await syncDir(paths.archive);
    await syncDir(paths.dir);
  }

  /**
   * Continues this run's stream: a torn last line (a crash mid-append) is
   * cut off, and the last `seq` is read from the end of the file.
   */
  async #reopen(): Promise<void> {
    const ctx = this.#ctx;
    await repairTornTail(ctx.paths.events, ctx.within);
    const file = await openExisting(ctx.paths.events, ctx.within);
    if (file === null) return;
    try {
      const size = (await file.stat()).size;
      const chunk = new Uint8Array(Math.min(size, 256 * 1024));
      await file.seek(size - chunk.length, Deno.SeekMode.Start);
      let read = 0;
      while (read < chunk.length) {
        const n = await file.read(chunk.subarray(read));
        if (n === null || n === 0) break;
        read += n;
      }
      const lines = new TextDecoder().decode(chunk.subarray(0, read))
        .split("\n").filter(Boolean);
      for (let i = lines.length - 1; i >= 0; i--) {
        try {
          const event = JSON.parse(lines[i]!);
          if (Number.isInteger(event?.seq)) {
            this.lastSeq = event.seq;
            if (event.type === "run_finished") {
              this.finished = typeof event.data?.status === "string"
                ? event.data.status
                : "failed";
            }
            break;
          }
        } catch {
          // The chunk may start mid-line: keep looking further back.
        }
      }
    } finally {
      file.close();
    }
  }
}
