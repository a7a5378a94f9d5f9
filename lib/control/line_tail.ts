/**
 * Tailing an append-only JSONL file: complete lines only, in bounded
 * batches, following the file by handle (so a rename does not lose it),
 * woken by `Deno.watchFs` with a slow poll as a safety net.
 *
 * @module
 */

import { basename } from "../shared/posix_path.ts";

const POLL_MS = 500;
/** A change this soon after the one before means the file is busy… */
const BUSY_MS = 3;
/** …and its changes are then taken together, this long after the first. */
const COALESCE_MS = 2;
/**
 * Bytes of lines per batch: memory stays flat however long the file is (and
 * a batch's text stays below the size V8 keeps apart from its young
 * generation).
 */
const BATCH_BYTES = 120 * 1024;
/** Bytes read at once: few reads for a long replay. */
const READ_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/** Reads the complete lines appended to a file since the last read. */
export class LineTail {
  readonly #file: Deno.FsFile;
  readonly #decoder = new TextDecoder();
  /** Reused between reads; grows only for a line longer than it. */
  #buffer = new Uint8Array(READ_BYTES);
  /** The unread bytes: `#buffer[#start, #filled)`, from file offset `#offset`. */
  #start = 0;
  #filled = 0;
  /** Where the next unread line starts (`null`: the file's position at the first read). */
  #offset: number | null;
  #skipFirstLine: boolean;

  /**
   * Wraps an open file, reading from `offset` (default: the file's current
   * position). With `skipPartial`, text up to the first newline is dropped:
   * the reader joined in the middle of a line.
   */
  constructor(file: Deno.FsFile, skipPartial = false, offset?: number) {
    this.#file = file;
    this.#skipFirstLine = skipPartial;
    this.#offset = offset ?? null;
  }

  /** Where the next unread line starts. */
  get offset(): number | null {
    return this.#offset;
  }

  /**
   * The next batch of complete lines, as text (each line with its newline),
   * or `null` when no complete line is there yet. A batch is at most about
   * 120 KiB, or one line when a line is longer than that.
   */
  async readText(): Promise<string | null> {
    const bytes = await this.#next(BATCH_BYTES);
    return bytes === null ? null : this.#decoder.decode(bytes);
  }

  /**
   * The next block of complete lines as the bytes read (each line with its
   * newline), or `null` when no complete line is there yet: every complete
   * line buffered by one read (up to about 1 MiB), for passing through
   * unchanged. They are a view of the reader's buffer, valid until the
   * next read: memory stays flat.
   */
  readBytes(): Promise<Uint8Array | null> {
    return this.#next(Infinity);
  }

  /** The next complete lines, up to about `batchBytes` of them, or `null`. */
  async #next(batchBytes: number): Promise<Uint8Array | null> {
    this.#offset ??= await this.#file.seek(0, Deno.SeekMode.Current);
    let end = this.#batchEnd(batchBytes);
    if (end < 0) {
      await this.#refill();
      end = this.#batchEnd(batchBytes);
      if (end < 0) return null;
    }
    let bytes = this.#buffer.subarray(this.#start, end + 1);
    this.#offset += bytes.length;
    this.#start = end + 1;
    if (this.#skipFirstLine) {
      this.#skipFirstLine = false;
      const first = bytes.indexOf(NEWLINE);
      bytes = bytes.subarray(first + 1);
    }
    return bytes;
  }

  /** The index of the newline ending the next batch in the buffer, or -1. */
  #batchEnd(batchBytes: number): number {
    const limit = Math.min(this.#start + batchBytes, this.#filled);
    const at = this.#buffer.subarray(this.#start, limit).lastIndexOf(NEWLINE);
    if (at >= 0) return this.#start + at;
    // A line longer than a batch: up to its end, when it is in the buffer.
    const beyond = this.#buffer.subarray(limit, this.#filled).indexOf(NEWLINE);
    return beyond >= 0 ? limit + beyond : -1;
  }

  /**
   * Reads from the first unread byte on, until the buffer is full (holding a
   * whole line) or the file ends. The partial line buffered last time is
   * read again: it may have been cut and rewritten (a resumed runner
   * truncates a torn tail).
   */
  async #refill(): Promise<void> {
    this.#start = 0;
    this.#filled = 0;
    await this.#file.seek(this.#offset!, Deno.SeekMode.Start);
    let whole = false;
    for (;;) {
      if (this.#filled === this.#buffer.length) {
        if (whole) return;
        const grown = new Uint8Array(this.#buffer.length * 2);
        grown.set(this.#buffer);
        this.#buffer = grown;
      }
      const n = await this.#file.read(this.#buffer.subarray(this.#filled));
      if (n === null || n === 0) return;
      whole ||= this.#buffer.subarray(this.#filled, this.#filled + n)
        .includes(NEWLINE);
      this.#filled += n;
    }
  }

  /** The next batch of complete, non-empty lines (none when none is there yet). */
  async read(): Promise<string[]> {
    for (;;) {
      const text = await this.readText();
      if (text === null) return [];
      const lines = text.split("\n").filter((line) => line !== "");
      if (lines.length > 0) return lines;
    }
  }

  /** Closes the file. */
  close(): void {
    try {
      this.#file.close();
    } catch {
      // Already closed.
    }
  }
}

/** Wakes a waiting reader when a directory changes, or after a poll period. */
export class DirWaker {
  #watcher: Deno.FsWatcher | null = null;
  #wake: ((busy: boolean) => void) | null = null;
  /** A change seen while nobody waited: the next wait ends at once. */
  #missed = false;
  #lastChange = -Infinity;
  /** Whether the last change came within {@linkcode BUSY_MS} of the one before. */
  #busy = false;
  #pump: Promise<void> = Promise.resolve();

  /**
   * Watches `dir` (non-recursively); polling alone when watching fails.
   * Given `names`, only a change to one of those files wakes it: a reader
   * of the log is not woken by every event the runner appends.
   */
  constructor(dir: string, names?: readonly string[]) {
    try {
      this.#watcher = Deno.watchFs(dir, { recursive: false });
      const watcher = this.#watcher;
      this.#pump = (async () => {
        try {
          for await (const event of watcher) {
            if (
              names === undefined ||
              event.paths.some((path) => names.includes(basename(path)))
            ) {
              this.wake();
            }
          }
        } catch {
          // The watcher closed.
        }
      })();
    } catch {
      this.#watcher = null;
    }
  }

  /**
   * Ends the current wait, or the next one when nobody waits: a change that
   * lands between a reader's last read and its wait is not slept through.
   * While changes come every few milliseconds (a busy writer), the wait
   * ends {@linkcode COALESCE_MS} after the change instead, so that one read
   * takes several appends: a busy follower wakes less often, a quiet one
   * as soon as a line lands.
   */
  wake(): void {
    const now = performance.now();
    this.#busy = now - this.#lastChange < BUSY_MS;
    this.#lastChange = now;
    if (this.#wake === null) this.#missed = true;
    else this.#wake(this.#busy);
  }

  /** Waits for a change in the directory, a poll period, or an abort. */
  wait(signal?: AbortSignal, ms = POLL_MS): Promise<void> {
    const settle = this.#missed ? (this.#busy ? COALESCE_MS : 0) : null;
    this.#missed = false;
    if (settle === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.#wake = null;
        resolve();
      };
      const settling = (): void => {};
      let timer = setTimeout(done, settle ?? ms);
      this.#wake = settle !== null ? settling : (busy) => {
        if (!busy) return done();
        clearTimeout(timer);
        timer = setTimeout(done, COALESCE_MS);
        this.#wake = settling;
      };
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Stops watching. */
  async close(): Promise<void> {
    try {
      this.#watcher?.close();
    } catch {
      // Already closed.
    }
    await this.#pump;
  }
}
