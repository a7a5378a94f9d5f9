/**
 * The dashboard's HTTP/1.1 server, on `Deno.listen`. `Deno.serve` gives no
 * hold on its accept loop (a "Too many open files" there is an uncaught
 * error that ends the process), times out no request and caps no
 * connection, so the dashboard speaks the little HTTP/1.1 it needs itself:
 * requests in order on kept-alive connections, bodies by `Content-Length`
 * or chunked and read only as the handler pulls them, responses with a
 * length or (event streams) chunked as they are written.
 *
 * What a client may hold is bounded: a connection must send a request's
 * head within a timeout and its body without stalling, waits for its next
 * request only so long, and the server keeps at most a cap of connections
 * (the one waiting longest makes room for a new one, once it has waited a
 * grace: a client that sends its request at once is always read). An accept that fails
 * (out of files) is retried, after closing the connections that wait the
 * longest, never fatal.
 *
 * @module
 */

import { Connection } from "./_http_connection.ts";
import {
  type HttpHandler,
  type HttpLimits,
  lengthResponse,
  type Refusal,
  responseHead,
} from "./_http_wire.ts";

export type { HttpHandler, HttpLimits, Refusal };

/** The dashboard's limits (README "Dashboard", `serve --help`). */
export const HTTP_LIMITS: Readonly<HttpLimits> = {
  max_connections: 256,
  headers_timeout_ms: 10_000,
  idle_timeout_ms: 10_000,
  body_timeout_ms: 60_000,
  write_timeout_ms: 30_000,
  max_head_bytes: 32 * 1024,
  room_grace_ms: 1_000,
};

/** Files kept free for the server's own work when it runs out of them. */
const FILE_RESERVE = 32;

/** How long a run out of files lowers the cap. */
const FILE_SHORTAGE_MS = 30_000;

/** Options for {@linkcode HttpServer}. */
export interface HttpServerOptions {
  /** The listeners it accepts connections on. */
  listeners: Deno.Listener[];
  /** Answers each request. */
  handler: HttpHandler;
  /** The body of the server's own refusals. */
  refusal: Refusal;
  /** Told when an accept fails (the server waits and goes on). */
  onAcceptError?: (error: Error) => void;
  /** Limits other than {@linkcode HTTP_LIMITS}. */
  limits?: Partial<HttpLimits>;
}

function isFileShortage(error: unknown): boolean {
  return /too many open files|os error 2[34]\b/i.test(String(error));
}

export class HttpServer {
  readonly handler: HttpHandler;
  readonly refusal: Refusal;
  readonly #listeners: Deno.Listener[];
  readonly #limits: HttpLimits;
  readonly #connections = new Set<Connection>();
  readonly #running = new Set<Promise<void>>();
  readonly #onAcceptError: (error: Error) => void;
  readonly #loops: Promise<void>[];
  #stopping = false;
  #busyBytes: Promise<Uint8Array> | null = null;
  #shortageAt = -Infinity;
  #ceiling: number;
  readonly #wakers = new Set<() => void>();

  constructor(options: HttpServerOptions) {
    this.handler = options.handler;
    this.refusal = options.refusal;
    this.#listeners = options.listeners;
    this.#limits = { ...HTTP_LIMITS, ...options.limits };
    this.#ceiling = this.#limits.max_connections;
    this.#onAcceptError = options.onAcceptError ?? (() => {});
    this.#loops = this.#listeners.map((listener) => this.#accept(listener));
  }

  /** Whether it is shutting down. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** How many connections are open. */
  get connections(): number {
    return this.#connections.size;
  }

  /** One turn of the event loop: the reads that are ready complete. */
  #turn(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, 0));
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wakers.add(done);
    });
  }

  /**
   * Closes a connection that waits for a request: one kept alive after an
   * answer first (its client opens another when it needs one), else the
   * one that has waited longest; whether there was one.
   */
  #evict(): boolean {
    let oldest: Connection | null = null;
    const rank = (c: Connection): number => c.served > 0 ? 0 : 1;
    const since = Date.now() - this.#limits.room_grace_ms;
    for (const connection of this.#connections) {
      if (connection.state !== "waiting") continue;
      if (connection.waitingSince > since) continue;
      if (
        oldest === null || rank(connection) < rank(oldest) ||
        (rank(connection) === rank(oldest) &&
          connection.waitingSince < oldest.waitingSince)
      ) {
        oldest = connection;
      }
    }
    if (oldest === null) return false;
    this.#connections.delete(oldest);
    oldest.evict(this.#busyAnswer());
    return true;
  }

  /**
   * How long until a waiting connection has waited its grace (so may make
   * room), or `null` when none waits.
   */
  #untilEvictable(): number | null {
    let first = Infinity;
    for (const connection of this.#connections) {
      if (connection.state !== "waiting") continue;
      first = Math.min(first, connection.waitingSince);
    }
    if (first === Infinity) return null;
    return Math.max(1, first + this.#limits.room_grace_ms - Date.now() + 1);
  }

  async #accept(listener: Deno.Listener): Promise<void> {
    let backoff = 0;
    while (!this.#stopping) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
        backoff = 0;
      } catch (error) {
        if (
          this.#stopping || error instanceof Deno.errors.BadResource ||
          error instanceof Deno.errors.Interrupted
        ) {
          return;
        }
        this.#onAcceptError(error as Error);
        if (isFileShortage(error)) {
          // Keep some files for the pages' own reads, and make room. (A
          // closed connection's file is freed a moment later, so the cap
          // is lowered once per shortage, not at each retry.)
          if (Date.now() - this.#shortageAt > 1_000) {
            this.#ceiling = Math.max(1, this.#connections.size - FILE_RESERVE);
          }
          this.#shortageAt = Date.now();
          await this.#turn();
          let evicted = false;
          while (this.#connections.size > this.#ceiling && this.#evict()) {
            evicted = true;
          }
          if (evicted || this.#evict()) {
            await this.#sleep(10);
            continue;
          }
        }
        backoff = Math.min(1_000, Math.max(10, backoff * 2));
        await this.#sleep(backoff);
        continue;
      }
      await this.#admit(conn);
    }
  }

  async #admit(conn: Deno.Conn): Promise<void> {
    if (Date.now() - this.#shortageAt > FILE_SHORTAGE_MS) {
      this.#ceiling = this.#limits.max_connections;
    }
    // Accepts that are ready complete at once, one after the other: before
    // closing one that waits, let every connection read what it was sent
    // (one that has its request is busy, not waiting).
    if (this.#connections.size >= this.#ceiling) await this.#turn();
    if (this.#stopping) {
      conn.close();
      return;
    }
    while (this.#connections.size >= this.#ceiling) {
      if (this.#evict()) continue;
      // None has waited its grace yet: this one waits (a flood's burst is
      // let in at the pace the cap allows, and a client that sent its
      // request is read before it could be closed), unless none waits.
      const wait = this.#untilEvictable();
      if (wait === null) {
        void this.#busy(conn);
        return;
      }
      await this.#sleep(wait);
      if (this.#stopping) {
        conn.close();
        return;
      }
    }
    const connection = new Connection(this, conn, this.#limits);
    this.#connections.add(connection);
    const running = connection.run().finally(() => {
      this.#connections.delete(connection);
      this.#running.delete(running);
    });
    this.#running.add(running);
  }

  /** The answer of a server with no room: a 503, whole, as bytes (made once). */
  #busyAnswer(): Promise<Uint8Array> {
    this.#busyBytes ??= (async () => {
      const response = this.refusal(
        503,
        "Service unavailable: the dashboard has too many connections",
      );
      const body = new Uint8Array(await response.arrayBuffer());
      return lengthResponse(responseHead(response, false), body);
    })();
    return this.#busyBytes;
  }

  /** Every connection is busy: this one is told so and closed. */
  async #busy(conn: Deno.Conn): Promise<void> {
    const timer = setTimeout(() => conn.close(), 1_000);
    try {
      await conn.write(await this.#busyAnswer());
    } catch {
      // Gone already.
    } finally {
      clearTimeout(timer);
      try {
        conn.close();
      } catch {
        // Closed by the timer.
      }
    }
  }

  /**
   * Stops accepting, closes the connections that wait, lets the others
   * finish their response (their streams end when the dashboard stops)
   * for up to `graceMs`, then closes them too.
   */
  async shutdown(graceMs = 3_000): Promise<void> {
    this.#stopping = true;
    for (const wake of [...this.#wakers]) wake();
    for (const listener of this.#listeners) {
      try {
        listener.close();
      } catch {
        // Closed already.
      }
    }
    await Promise.all(this.#loops);
    for (const connection of this.#connections) {
      if (connection.state === "waiting") connection.close();
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(this.#running),
      new Promise((resolve) => timer = setTimeout(resolve, graceMs)),
    ]).finally(() => clearTimeout(timer));
    for (const connection of this.#connections) connection.close();
    await Promise.all(this.#running);
  }
}
