/**
 * Reading a child's output line by line.
 *
 * @module
 */

/** Reads lines from a byte stream; `cancel()` closes it (like `head` exiting). */
export class LineReader {
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";
  /** Every line read so far. */
  readonly seen: string[] = [];

  /** Wraps a byte stream. */
  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next line, or `null` at the end of the stream. */
  async next(): Promise<string | null> {
    while (!this.#buffer.includes("\n")) {
      const { value, done } = await this.#reader.read();
      if (done) {
        if (this.#buffer === "") return null;
        const rest = this.#buffer;
        this.#buffer = "";
        this.seen.push(rest);
        return rest;
      }
      this.#buffer += value;
    }
    const index = this.#buffer.indexOf("\n");
    const line = this.#buffer.slice(0, index);
    this.#buffer = this.#buffer.slice(index + 1);
    this.seen.push(line);
    return line;
  }

  /** Reads lines until one satisfies `match`; fails at the end of the stream. */
  async until(match: (line: string) => boolean): Promise<string> {
    for (;;) {
      const line = await this.next();
      if (line === null) {
        throw new Error(
          `stream ended before a matching line; saw:\n${this.seen.join("\n")}`,
        );
      }
      if (match(line)) return line;
    }
  }

  /** Reads everything that is left. */
  async rest(): Promise<string[]> {
    const lines: string[] = [];
    for (
      let line = await this.next();
      line !== null;
      line = await this.next()
    ) {
      lines.push(line);
    }
    return lines;
  }

  /** Closes the stream: the writer's next write fails with a broken pipe. */
  async cancel(): Promise<void> {
    await this.#reader.cancel();
  }
}

/** Reads a whole stream as text. */
export async function readAll(
  stream: ReadableStream<Uint8Array>,
): Promise<string> {
  return await new Response(stream).text();
}
