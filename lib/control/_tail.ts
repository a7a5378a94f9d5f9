/**
 * Tailing an append-only JSONL file: complete lines only, in bounded
 * batches, following the file by handle (so a rename does not lose it),
 * woken by `Deno.watchFs` with a slow poll as a safety net.
 *
 * @module
 */

const POLL_MS = 500;
/**
 * Bytes read per batch: memory stays flat however long the file is (and a
 * batch stays below the size V8 keeps apart from its young generation).
 */
const BATCH_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** Reads the complete lines appended to a file since the last read. */
export class LineTail {
  readonly #file: Deno.FsFile;
  readonly #decoder = new TextDecoder();
  /** Reused between reads; grows only for a line longer than a batch. */
  #buffer = new Uint8Array(BATCH_BYTES);
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
   * or `null` when no complete line is there yet. A batch is at most about a
   * megabyte, or one line when a line is longer than that.
   */
  async readText(): Promise<string | null> {
    // Read from the end of the last complete line each time: a partial line
    // may be cut and rewritten (a resumed runner truncates a torn tail).
    this.#offset ??= await this.#file.seek(0, Deno.SeekMode.Current);
    await this.#file.seek(this.#offset, Deno.SeekMode.Start);
    let size = 0;
    let end = -1;
    for (;;) {
      if (size === this.#buffer.length) {
        if (end >= 0) break;
        const grown = new Uint8Array(this.#buffer.length * 2);
        grown.set(this.#buffer);
        this.#buffer = grown;
      }
      const n = await this.#file.read(this.#buffer.subarray(size));
      if (n === null || n === 0) break;
      const at = this.#buffer.subarray(size, size + n).lastIndexOf(NEWLINE);
      if (at >= 0) end = size + at;
      size += n;
    }
    if (end < 0) return null;
    this.#offset += end + 1;
    let bytes = this.#buffer.subarray(0, end + 1);
    if (this.#skipFirstLine) {
      this.#skipFirstLine = false;
      const first = bytes.indexOf(NEWLINE);
      if (first < 0) return "";
      bytes = bytes.subarray(first + 1);
    }
    return this.#decoder.decode(bytes);
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
  #wake: (() => void) | null = null;
  #pump: Promise<void> = Promise.resolve();

  /** Watches `dir` (non-recursively); polling alone when watching fails. */
  constructor(dir: string) {
    try {
      this.#watcher = Deno.watchFs(dir, { recursive: false });
      const watcher = this.#watcher;
      this.#pump = (async () => {
        try {
          for await (const _ of watcher) this.#wake?.();
        } catch {
          // The watcher closed.
        }
      })();
    } catch {
      this.#watcher = null;
    }
  }

  /** Waits for a change in the directory, a poll period, or an abort. */
  wait(signal?: AbortSignal, ms = POLL_MS): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
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
