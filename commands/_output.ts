/**
 * The one way the CLI writes: whole writes to a file descriptor, with a
 * closed pipe turned into a quiet stop.
 *
 * @module
 */

// The file, not the render barrel: every command loads this module.
import { terminalSafe } from "../lib/render/ansi.ts";

/** Thrown when stdout is closed (`| head`): the command stops quietly with 0. */
export class StdoutClosedError extends Error {
  /** Creates the error. */
  constructor() {
    super("stdout is closed");
    this.name = "StdoutClosedError";
  }
}

/** Something bytes can be written to (`Deno.stdout`, a test buffer). */
export interface ByteSink {
  /** Writes some of the bytes and returns how many. */
  write(bytes: Uint8Array): Promise<number>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Options for a {@linkcode Writer}. */
export interface WriterOptions {
  /**
   * Make every write terminal-safe (no escape sequence, no control but
   * newline and tab): for stderr, which carries only human text.
   */
  terminalSafe?: boolean;
}

/** A text writer over a byte sink. */
export class Writer {
  readonly #sink: ByteSink;
  readonly #safe: boolean;
  #closed = false;

  /** Wraps a byte sink. */
  constructor(sink: ByteSink, options: WriterOptions = {}) {
    this.#sink = sink;
    this.#safe = options.terminalSafe === true;
  }

  /** Whether this writer writes to `sink` (the process's own stdout, say). */
  wraps(sink: ByteSink): boolean {
    return this.#sink === sink;
  }

  /** Whether this writer makes every write terminal-safe. */
  get terminalSafe(): boolean {
    return this.#safe;
  }

  /** Whether the other end has gone away. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Writes text in full.
   *
   * @throws {StdoutClosedError} when the reader has gone away.
   */
  async write(text: string): Promise<void> {
    if (this.#closed) throw new StdoutClosedError();
    await this.writeBytes(
      encoder.encode(this.#safe ? terminalSafe(text) : text),
    );
  }

  /**
   * Writes bytes in full, as they are: for text already encoded (stored
   * lines passed through). A terminal-safe writer decodes them and writes
   * the text made safe.
   *
   * @throws {StdoutClosedError} when the reader has gone away.
   */
  async writeBytes(bytes: Uint8Array): Promise<void> {
    if (this.#closed) throw new StdoutClosedError();
    if (this.#safe) {
      bytes = encoder.encode(terminalSafe(decoder.decode(bytes)));
    }
    let offset = 0;
    try {
      while (offset < bytes.length) {
        offset += await this.#sink.write(bytes.subarray(offset));
      }
    } catch (error) {
      if (
        error instanceof Deno.errors.BrokenPipe ||
        error instanceof Deno.errors.ConnectionReset
      ) {
        this.#closed = true;
        throw new StdoutClosedError();
      }
      throw error;
    }
  }

  /** Writes one line. */
  async line(text = ""): Promise<void> {
    await this.write(text + "\n");
  }

  /** Writes one compact JSON object as one NDJSON line, in one write. */
  async json(value: unknown): Promise<void> {
    await this.write(JSON.stringify(value) + "\n");
  }
}
