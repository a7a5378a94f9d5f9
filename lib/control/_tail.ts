/**
 * Tailing an append-only JSONL file: complete lines only, following the file
 * by handle (so a rename does not lose it), woken by `Deno.watchFs` with a
 * slow poll as a safety net.
 *
 * @module
 */

const POLL_MS = 500;

/** Reads the complete lines appended to a file since the last read. */
export class LineTail {
  readonly #file: Deno.FsFile;
  readonly #decoder = new TextDecoder();
  readonly #chunk = new Uint8Array(64 * 1024);
  #partialBytes = 0;
  #skipFirstLine: boolean;

  /**
   * Wraps an open file. With `skipPartial`, text up to the first newline is
   * dropped: the reader joined in the middle of a line.
   */
  constructor(file: Deno.FsFile, skipPartial = false) {
    this.#file = file;
    this.#skipFirstLine = skipPartial;
  }

  /** The complete lines available now (never a partial trailing line). */
  async read(): Promise<string[]> {
    // Read from the end of the last complete line each time: a partial line
    // may be cut and rewritten (a resumed runner truncates a torn tail).
    const start = await this.#file.seek(0, Deno.SeekMode.Current) -
      this.#partialBytes;
    await this.#file.seek(start, Deno.SeekMode.Start);
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const n = await this.#file.read(this.#chunk);
      if (n === null || n === 0) break;
      chunks.push(this.#chunk.slice(0, n));
      size += n;
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    const end = bytes.lastIndexOf(0x0a);
    this.#partialBytes = size - (end + 1);
    if (end < 0) return [];
    const lines = this.#decoder.decode(bytes.subarray(0, end)).split("\n");
    if (this.#skipFirstLine) {
      this.#skipFirstLine = false;
      lines.shift();
    }
    return lines.filter((line) => line !== "");
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
