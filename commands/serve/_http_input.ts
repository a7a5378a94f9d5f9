/**
 * What a connection of the dashboard's server has read: a growing buffer
 * filled as it is needed (one read at a time), and the pieces of a request
 * body (by length, or chunked) taken from it.
 *
 * @module
 */

import { BadRequest, type Framing, latin1 } from "./_http_wire.ts";

/** A connection's input. */
export class Input {
  readonly #conn: Deno.Conn;
  readonly #closed: () => boolean;
  #buffer = new Uint8Array(16 * 1024);
  #start = 0;
  #end = 0;
  #eof = false;
  #reading: Promise<boolean> | null = null;

  /** Reads `conn` until it ends or `closed` says it is. */
  constructor(conn: Deno.Conn, closed: () => boolean) {
    this.#conn = conn;
    this.#closed = closed;
  }

  /** What has been read and not taken. */
  view(): Uint8Array {
    return this.#buffer.subarray(this.#start, this.#end);
  }

  /** Drops what has been read and not taken. */
  drop(): void {
    this.#start = this.#end;
  }

  get buffered(): number {
    return this.#end - this.#start;
  }

  /** Reads more bytes into the buffer: `false` at the end (or an error). */
  fill(): Promise<boolean> {
    if (this.#reading !== null) return this.#reading;
    if (this.#eof || this.#closed()) return Promise.resolve(false);
    if (this.#buffer.length - this.#end < 4096) {
      const needed = this.buffered + 16 * 1024;
      const next = needed > this.#buffer.length
        ? new Uint8Array(Math.max(needed, this.#buffer.length * 2))
        : this.#buffer;
      next.set(this.#buffer.subarray(this.#start, this.#end));
      this.#end -= this.#start;
      this.#start = 0;
      this.#buffer = next;
    }
    const reading = (async () => {
      try {
        const n = await this.#conn.read(this.#buffer.subarray(this.#end));
        if (n === null) {
          this.#eof = true;
          return false;
        }
        this.#end += n;
        return true;
      } catch {
        this.#eof = true;
        return false;
      } finally {
        this.#reading = null;
      }
    })();
    this.#reading = reading;
    return reading;
  }

  take(n: number): Uint8Array {
    const bytes = this.#buffer.slice(this.#start, this.#start + n);
    this.#start += n;
    // A read in flight writes at #end: only an idle buffer starts over.
    if (this.#start === this.#end && this.#reading === null) {
      this.#start = this.#end = 0;
    }
    return bytes;
  }

  /** A line of a chunked body (size or trailer), without its end. */
  async readLine(
    deadline: number,
    more: (deadline: number) => Promise<void>,
  ): Promise<string> {
    for (;;) {
      const view = this.view();
      const at = view.indexOf(0x0a);
      if (at >= 0) return latin1(this.take(at + 1)).replace(/\r?\n$/, "");
      if (view.length > 4096) {
        throw new BadRequest(400, "Bad request: malformed chunked body");
      }
      await more(deadline);
    }
  }

  /** The next piece of a body, or `null` at its end. */
  async bodyPiece(
    framing: Framing,
    deadline: number,
    more: (deadline: number) => Promise<void>,
  ): Promise<Uint8Array | null> {
    if (framing.kind === "none") return null;
    if (framing.kind === "chunked" && framing.left === 0) {
      if (framing.done) return null;
      if (!framing.first) {
        if (await this.readLine(deadline, more) !== "") {
          throw new BadRequest(400, "Bad request: malformed chunked body");
        }
      }
      framing.first = false;
      const line = await this.readLine(deadline, more);
      const size = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/.exec(line);
      if (size === null) {
        throw new BadRequest(400, "Bad request: malformed chunk size");
      }
      framing.left = parseInt(size[1]!, 16);
      if (framing.left === 0) {
        framing.done = true;
        // Trailers, up to the blank line.
        for (let n = 0; (await this.readLine(deadline, more)) !== ""; n++) {
          if (n > 32) throw new BadRequest(400, "Bad request: trailers");
        }
        return null;
      }
    }
    if (framing.left === 0) return null;
    if (this.buffered === 0) await more(deadline);
    const piece = this.take(Math.min(framing.left, this.buffered));
    framing.left -= piece.length;
    return piece;
  }
}
