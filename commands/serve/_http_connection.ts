/**
 * One connection of the dashboard's HTTP/1.1 server: requests in order on
 * a kept-alive connection, each head within its timeout, bodies by
 * `Content-Length` or chunked and read only as the handler pulls them,
 * responses with a length or (event streams) chunked as they are written,
 * and a client that leaves mid-stream noticed.
 *
 * @module
 */

import {
  BadRequest,
  bodyEnded,
  concat,
  type ConnectionHost,
  encoder,
  type Head,
  type HttpLimits,
  latin1,
  lengthResponse,
  parseHead,
  responseHead,
} from "./_http_wire.ts";
import { Input } from "./_http_input.ts";
import { errorText } from "../../mod.ts";

/** How long a refused body is read and dropped so the answer arrives. */
const LINGER_MS = 2_000;
/** How long an evicted connection's answer may take. */
const EVICT_ANSWER_MS = 1_000;

/** One client connection: its requests in order, each answered. */
export class Connection {
  readonly #server: ConnectionHost;
  readonly #conn: Deno.Conn;
  readonly #limits: HttpLimits;
  readonly #in: Input;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #onClose: (() => void)[] = [];
  /** `waiting` for a request (may be closed to make room), or `busy`. */
  state: "waiting" | "busy" = "waiting";
  /** Since when it waits. */
  waitingSince = Date.now();
  /** How many requests it has had answered. */
  served = 0;
  /** Whether a byte of the present request has arrived. */
  #started = false;
  /** Whether a streamed response watches for the client leaving. */
  #watching = false;
  /** Whether it is being closed to make room, its answer on the way. */
  #evicting = false;

  constructor(server: ConnectionHost, conn: Deno.Conn, limits: HttpLimits) {
    this.#server = server;
    this.#conn = conn;
    this.#limits = limits;
    this.#in = new Input(conn, () => this.#closed);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Closes it to make room, `answer` (the server's 503) written first: a
   * request it sent that a loaded server has not read yet is answered, not
   * cut.
   */
  evict(answer: Promise<Uint8Array>): void {
    if (this.#closed || this.#evicting) return;
    this.#evicting = true;
    this.state = "busy";
    const timer = setTimeout(() => this.close(true), EVICT_ANSWER_MS);
    void answer.then((bytes) => this.#conn.write(bytes)).catch(() => 0)
      .finally(() => {
        clearTimeout(timer);
        this.close(true);
      });
  }

  /** Closes it now (after an eviction's answer); whatever is pending fails. */
  close(evicted = false): void {
    if (this.#closed || (this.#evicting && !evicted)) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    try {
      this.#conn.close();
    } catch {
      // Closed already.
    }
    for (const listener of this.#onClose.splice(0)) listener();
  }

  /** Closes it when `ms` pass before the next {@linkcode #arm} or disarm. */
  #arm(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, ms));
  }

  #disarm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #expire(): void {
    this.close();
  }

  /** The next request's head, or `null` when the client is done. */
  async #readHead(fresh: boolean): Promise<Head | null> {
    this.#started = this.#in.buffered > 0;
    this.#arm(
      fresh || this.#started
        ? this.#limits.headers_timeout_ms
        : this.#limits.idle_timeout_ms,
    );
    let scanned = 0;
    for (;;) {
      const view = this.#in.view();
      // Leading blank lines before a request are allowed (RFC 9112 §2.2).
      let skip = 0;
      while (view[skip] === 0x0d || view[skip] === 0x0a) skip++;
      if (skip > 0) {
        this.#in.take(skip);
        continue;
      }
      for (let i = Math.max(0, scanned - 3); i < view.length; i++) {
        if (view[i] !== 0x0a) continue;
        const end = view[i + 1] === 0x0a
          ? i + 2
          : view[i + 1] === 0x0d && view[i + 2] === 0x0a
          ? i + 3
          : -1;
        if (end < 0) continue;
        if (end > this.#limits.max_head_bytes) {
          throw new BadRequest(431, "Request header fields too large");
        }
        const text = latin1(this.#in.take(end));
        this.#disarm();
        return parseHead(text.trimEnd());
      }
      scanned = view.length;
      if (view.length > this.#limits.max_head_bytes) {
        throw new BadRequest(431, "Request header fields too large");
      }
      const had = this.#in.buffered;
      if (!await this.#in.fill()) {
        if (had > 0 && !this.#closed) {
          throw new BadRequest(400, "Bad request: the head ended early");
        }
        return null;
      }
      // A kept-alive connection's head has its time from its first byte
      // (a new connection's, from its opening).
      if (!this.#started && this.#in.buffered > 0) {
        this.#started = true;
        if (!fresh) this.#arm(this.#limits.headers_timeout_ms);
      }
    }
  }

  async #fillBody(deadline: number): Promise<void> {
    this.#arm(Math.min(this.#limits.idle_timeout_ms, deadline - Date.now()));
    const more = await this.#in.fill();
    this.#disarm();
    if (!more) throw new BadRequest(400, "Bad request: the body ended early");
  }

  async #write(bytes: Uint8Array): Promise<void> {
    let at = 0;
    while (at < bytes.length) {
      this.#arm(this.#limits.write_timeout_ms);
      try {
        at += await this.#conn.write(bytes.subarray(at));
      } finally {
        this.#disarm();
      }
    }
  }

  /** Answers with the server's refusal and closes. */
  async #refuseAndClose(status: number, message: string): Promise<void> {
    // Answering: not a connection that waits, so never one closed to make
    // room (its answer would be lost, or cut by a reset).
    this.state = "busy";
    try {
      const response = this.#server.refusal(status, message);
      await this.#respond(response, { method: "GET", keepAlive: false });
      await this.#linger();
    } catch {
      // The client is gone.
    } finally {
      this.close();
    }
  }

  /** Stops sending, and drops what the client still sends, for a while. */
  async #linger(): Promise<void> {
    try {
      await (this.#conn as Deno.TcpConn).closeWrite();
    } catch {
      return;
    }
    const timer = setTimeout(() => this.close(), LINGER_MS);
    try {
      do this.#in.drop(); while (await this.#in.fill());
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Writes a response: with a length, or (an event stream) chunked as its
   * body comes, stopping the body when the client goes away.
   */
  async #respond(
    response: Response,
    request: {
      method: string;
      keepAlive: boolean;
      watch?: boolean;
      version?: "1.0" | "1.1";
    },
  ): Promise<void> {
    let head = responseHead(response, request.keepAlive);
    const streaming = /^text\/event-stream/.test(
      response.headers.get("content-type") ?? "",
    );
    const body = response.body;
    if (!streaming || body === null) {
      const bytes = body === null
        ? new Uint8Array()
        : new Uint8Array(await response.arrayBuffer());
      await this.#write(
        lengthResponse(head, bytes, request.method === "HEAD"),
      );
      return;
    }
    // HTTP/1.0 knows no chunks: the stream's end is the connection's.
    const chunked = request.version !== "1.0";
    head += chunked ? "transfer-encoding: chunked\r\n\r\n" : "\r\n";
    const reader = body.getReader();
    const cancel = (): void => void reader.cancel().catch(() => {});
    this.#onClose.push(cancel);
    try {
      await this.#write(encoder.encode(head));
      if (request.method === "HEAD") return;
      // A read pending all along sees the client leave.
      if (request.watch) {
        this.#watching = true;
        void this.#watchForClose();
      }
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (this.#closed) throw new Error("The client left");
        if (value.length === 0) continue;
        await this.#write(
          chunked
            ? concat([
              encoder.encode(`${value.length.toString(16)}\r\n`),
              value,
              encoder.encode("\r\n"),
            ])
            : value,
        );
      }
      if (chunked) await this.#write(encoder.encode("0\r\n\r\n"));
    } finally {
      this.#watching = false;
      cancel();
      this.#onClose.splice(this.#onClose.indexOf(cancel), 1);
    }
  }

  /** Reads ahead (a next request, at most a head's worth) to see an end. */
  async #watchForClose(): Promise<void> {
    while (
      this.#watching && !this.#closed &&
      this.#in.buffered <= this.#limits.max_head_bytes
    ) {
      if (!await this.#in.fill()) {
        this.close();
        return;
      }
    }
  }

  /** Serves requests until the client leaves, a limit is hit, or the server stops. */
  async run(): Promise<void> {
    let fresh = true;
    try {
      for (;;) {
        this.state = "waiting";
        this.waitingSince = Date.now();
        let head: Head | null;
        try {
          head = await this.#readHead(fresh);
        } catch (error) {
          if (error instanceof BadRequest && !this.#closed && !this.#evicting) {
            await this.#refuseAndClose(error.status, error.message);
          }
          return;
        }
        fresh = false;
        if (head === null || this.#closed || this.#evicting) return;
        this.state = "busy";
        const keepAlive = await this.#serveOne(head);
        this.served++;
        if (!keepAlive || this.#closed || this.#server.stopping) return;
      }
    } finally {
      this.close();
    }
  }

  /** Serves one request; whether the connection can take another. */
  async #serveOne(head: Head): Promise<boolean> {
    const framing = head.framing;
    const deadline = Date.now() + this.#limits.body_timeout_ms;
    let continued = !head.expectContinue;
    let failed: BadRequest | null = null;
    const body = framing.kind === "none" ? null : new ReadableStream<
      Uint8Array
    >({
      pull: async (controller) => {
        try {
          if (!continued) {
            continued = true;
            await this.#write(encoder.encode("HTTP/1.1 100 Continue\r\n\r\n"));
          }
          const piece = await this.#in.bodyPiece(
            framing,
            deadline,
            (at) => this.#fillBody(at),
          );
          if (piece === null) controller.close();
          else controller.enqueue(piece);
        } catch (error) {
          failed = error instanceof BadRequest
            ? error
            : new BadRequest(400, "Bad request: the body could not be read");
          controller.error(failed);
        }
      },
    }, { highWaterMark: 0 });
    let request: Request;
    try {
      request = new Request(`http://${head.host}${head.target}`, {
        method: head.method,
        headers: head.headers,
        body,
      });
    } catch (error) {
      await body?.cancel();
      await this.#refuseAndClose(
        400,
        `Bad request: ${errorText(error)}`,
      );
      return false;
    }
    let response: Response;
    try {
      response = await this.#server.handler(request);
    } catch (error) {
      response = this.#server.refusal(
        500,
        `Internal error: ${errorText(error)}`,
      );
    }
    if (this.#closed) return false;
    const broken = failed as BadRequest | null;
    if (broken !== null) {
      await this.#refuseAndClose(broken.status, broken.message);
      return false;
    }
    // A body left unread cannot be skipped safely: answer, then close.
    const whole = bodyEnded(framing);
    const keepAlive = head.keepAlive && whole && !this.#server.stopping;
    try {
      await this.#respond(response, {
        method: head.method,
        keepAlive,
        watch: whole,
        version: head.version,
      });
      if (!whole) await this.#linger();
    } catch {
      return false;
    }
    return keepAlive;
  }
}

/**
 * An HTTP/1.1 server on the given listeners, with the limits of
 * {@linkcode HTTP_LIMITS}.
 */
