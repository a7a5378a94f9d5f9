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
 * (the one waiting longest makes room for a new one). An accept that fails
 * (out of files) is retried, after closing the connections that wait the
 * longest, never fatal.
 *
 * @module
 */

/** What one server allows its clients. */
export interface HttpLimits {
  /** The most connections open at once. */
  max_connections: number;
  /** How long a request's head may take, from its connection's first byte. */
  headers_timeout_ms: number;
  /** How long a connection may wait for its next request, or stall a body. */
  idle_timeout_ms: number;
  /** How long a request's whole body may take. */
  body_timeout_ms: number;
  /** How long a write may wait for a client that does not read. */
  write_timeout_ms: number;
  /** The largest request head (request line and headers). */
  max_head_bytes: number;
}

/** The dashboard's limits (README "Dashboard", `serve --help`). */
export const HTTP_LIMITS: Readonly<HttpLimits> = {
  max_connections: 256,
  headers_timeout_ms: 10_000,
  idle_timeout_ms: 10_000,
  body_timeout_ms: 60_000,
  write_timeout_ms: 30_000,
  max_head_bytes: 32 * 1024,
};

/** Files kept free for the server's own work when it runs out of them. */
const FILE_RESERVE = 32;

/** How long a run out of files lowers the cap. */
const FILE_SHORTAGE_MS = 30_000;

/** How long a refused body is read and dropped so the answer arrives. */
const LINGER_MS = 2_000;

/** What the server does with a request. */
export type HttpHandler = (request: Request) => Promise<Response>;

/** A response for a request the server refuses itself (400, 408, 503…). */
export type Refusal = (status: number, message: string) => Response;

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

const encoder = new TextEncoder();

/** A request the connection cannot serve: answered, then closed. */
class BadRequest extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const REASONS: Readonly<Record<number, string>> = {
  100: "Continue",
  200: "OK",
  303: "See Other",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  413: "Content Too Large",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const TARGET = /^\/[\x21-\x7e]*$/;
const HOST =
  /^(?:[A-Za-z0-9\-._~!$&'()*+,;=%]*|\[[0-9A-Fa-f:.]+\])(?::\d{0,5})?$/;
// deno-lint-ignore no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Headers a response may not set for itself: the framing is the server's. */
const HOP_BY_HOP = new Set([
  "connection",
  "content-length",
  "keep-alive",
  "transfer-encoding",
]);

function isFileShortage(error: unknown): boolean {
  return /too many open files|os error 2[34]\b/i.test(String(error));
}

function latin1(bytes: Uint8Array): string {
  let text = "";
  for (let at = 0; at < bytes.length; at += 8192) {
    text += String.fromCharCode(...bytes.subarray(at, at + 8192));
  }
  return text;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** How a request's body is framed. */
type Framing =
  | { kind: "none" }
  | { kind: "length"; left: number }
  | { kind: "chunked"; left: number; done: boolean; first: boolean };

/** A parsed request head. */
interface Head {
  method: string;
  target: string;
  version: "1.0" | "1.1";
  headers: [string, string][];
  host: string;
  framing: Framing;
  keepAlive: boolean;
  expectContinue: boolean;
}

function parseHead(text: string): Head {
  const lines = text.split(/\r?\n/);
  const [method, target, protocol, ...extra] = (lines.shift() ?? "").split(
    " ",
  );
  if (extra.length > 0 || !method || !target || !protocol) {
    throw new BadRequest(400, "Bad request: malformed request line");
  }
  if (!TOKEN.test(method)) {
    throw new BadRequest(400, "Bad request: malformed method");
  }
  if (protocol !== "HTTP/1.1" && protocol !== "HTTP/1.0") {
    throw new BadRequest(
      /^HTTP\/\d/.test(protocol) ? 505 : 400,
      "Only HTTP/1.1 is served here",
    );
  }
  if (!TARGET.test(target)) {
    throw new BadRequest(400, "Bad request: the target must be a path");
  }
  const headers: [string, string][] = [];
  for (const line of lines) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (!TOKEN.test(name) || BAD_VALUE.test(value)) {
      throw new BadRequest(400, "Bad request: malformed header");
    }
    headers.push([name.toLowerCase(), value]);
  }
  if (headers.length > 100) {
    throw new BadRequest(431, "Request header fields too large");
  }
  const all = (name: string): string[] =>
    headers.filter(([n]) => n === name).map(([, v]) => v);
  const hosts = all("host");
  if (hosts.length !== 1 || hosts[0] === "" || !HOST.test(hosts[0]!)) {
    throw new BadRequest(400, "Bad request: one Host header is required");
  }
  const encodings = all("transfer-encoding");
  const lengths = all("content-length").flatMap((v) => v.split(","))
    .map((v) => v.trim());
  let framing: Framing = { kind: "none" };
  if (encodings.length > 0) {
    if (lengths.length > 0) {
      throw new BadRequest(
        400,
        "Bad request: both Transfer-Encoding and Content-Length",
      );
    }
    if (encodings.join(",").trim().toLowerCase() !== "chunked") {
      throw new BadRequest(501, "Only chunked transfer encoding is served");
    }
    framing = { kind: "chunked", left: 0, done: false, first: true };
  } else if (lengths.length > 0) {
    const length = lengths[0]!;
    if (
      !/^\d{1,15}$/.test(length) || lengths.some((l) => l !== length)
    ) {
      throw new BadRequest(400, "Bad request: malformed Content-Length");
    }
    if (Number(length) > 0) framing = { kind: "length", left: Number(length) };
  }
  if (framing.kind !== "none" && (method === "GET" || method === "HEAD")) {
    throw new BadRequest(400, `Bad request: a ${method} has no body`);
  }
  const connection = all("connection").join(",").toLowerCase();
  return {
    method,
    target,
    version: protocol === "HTTP/1.1" ? "1.1" : "1.0",
    headers,
    host: hosts[0]!,
    framing,
    keepAlive: protocol === "HTTP/1.1" && !/\bclose\b/.test(connection),
    expectContinue: protocol === "HTTP/1.1" &&
      all("expect").some((v) => v.toLowerCase() === "100-continue"),
  };
}

/** One client connection: its requests in order, then closed. */
class Connection {
  readonly #server: HttpServer;
  readonly #conn: Deno.Conn;
  readonly #limits: HttpLimits;
  #buffer = new Uint8Array(16 * 1024);
  #start = 0;
  #end = 0;
  #eof = false;
  #reading: Promise<boolean> | null = null;
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

  constructor(server: HttpServer, conn: Deno.Conn, limits: HttpLimits) {
    this.#server = server;
    this.#conn = conn;
    this.#limits = limits;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closes it now; whatever is pending fails. */
  close(): void {
    if (this.#closed) return;
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

  get #buffered(): number {
    return this.#end - this.#start;
  }

  /** Reads more bytes into the buffer: `false` at the end (or an error). */
  #fill(): Promise<boolean> {
    if (this.#reading !== null) return this.#reading;
    if (this.#eof || this.#closed) return Promise.resolve(false);
    if (this.#buffer.length - this.#end < 4096) {
      const needed = this.#buffered + 16 * 1024;
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

  #take(n: number): Uint8Array {
    const bytes = this.#buffer.slice(this.#start, this.#start + n);
    this.#start += n;
    // A read in flight writes at #end: only an idle buffer starts over.
    if (this.#start === this.#end && this.#reading === null) {
      this.#start = this.#end = 0;
    }
    return bytes;
  }

  /** The next request's head, or `null` when the client is done. */
  async #readHead(fresh: boolean): Promise<Head | null> {
    this.#started = this.#buffered > 0;
    this.#arm(
      fresh || this.#started
        ? this.#limits.headers_timeout_ms
        : this.#limits.idle_timeout_ms,
    );
    let scanned = 0;
    for (;;) {
      const view = this.#buffer.subarray(this.#start, this.#end);
      // Leading blank lines before a request are allowed (RFC 9112 §2.2).
      let skip = 0;
      while (view[skip] === 0x0d || view[skip] === 0x0a) skip++;
      if (skip > 0) {
        this.#take(skip);
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
        const text = latin1(this.#take(end));
        this.#disarm();
        return parseHead(text.trimEnd());
      }
      scanned = view.length;
      if (view.length > this.#limits.max_head_bytes) {
        throw new BadRequest(431, "Request header fields too large");
      }
      const had = this.#buffered;
      if (!await this.#fill()) {
        if (had > 0 && !this.#closed) {
          throw new BadRequest(400, "Bad request: the head ended early");
        }
        return null;
      }
      // A kept-alive connection's head has its time from its first byte
      // (a new connection's, from its opening).
      if (!this.#started && this.#buffered > 0) {
        this.#started = true;
        if (!fresh) this.#arm(this.#limits.headers_timeout_ms);
      }
    }
  }

  /** A line of a chunked body (size or trailer), without its end. */
  async #readLine(deadline: number): Promise<string> {
    for (;;) {
      const view = this.#buffer.subarray(this.#start, this.#end);
      const at = view.indexOf(0x0a);
      if (at >= 0) return latin1(this.#take(at + 1)).replace(/\r?\n$/, "");
      if (view.length > 4096) {
        throw new BadRequest(400, "Bad request: malformed chunked body");
      }
      await this.#fillBody(deadline);
    }
  }

  async #fillBody(deadline: number): Promise<void> {
    this.#arm(Math.min(this.#limits.idle_timeout_ms, deadline - Date.now()));
    const more = await this.#fill();
    this.#disarm();
    if (!more) throw new BadRequest(400, "Bad request: the body ended early");
  }

  /** The next piece of a body, or `null` at its end. */
  async #bodyPiece(
    framing: Framing,
    deadline: number,
  ): Promise<Uint8Array | null> {
    if (framing.kind === "none") return null;
    if (framing.kind === "chunked" && framing.left === 0) {
      if (framing.done) return null;
      if (!framing.first) {
        if (await this.#readLine(deadline) !== "") {
          throw new BadRequest(400, "Bad request: malformed chunked body");
        }
      }
      framing.first = false;
      const line = await this.#readLine(deadline);
      const size = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/.exec(line);
      if (size === null) {
        throw new BadRequest(400, "Bad request: malformed chunk size");
      }
      framing.left = parseInt(size[1]!, 16);
      if (framing.left === 0) {
        framing.done = true;
        // Trailers, up to the blank line.
        for (let n = 0; (await this.#readLine(deadline)) !== ""; n++) {
          if (n > 32) throw new BadRequest(400, "Bad request: trailers");
        }
        return null;
      }
    }
    if (framing.left === 0) return null;
    if (this.#buffered === 0) await this.#fillBody(deadline);
    const piece = this.#take(Math.min(framing.left, this.#buffered));
    framing.left -= piece.length;
    return piece;
  }

  /** Whether a body has been read to its end. */
  static #ended(framing: Framing): boolean {
    return framing.kind === "none" ||
      (framing.kind === "length" && framing.left === 0) ||
      (framing.kind === "chunked" && framing.done);
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
      do this.#start = this.#end; while (await this.#fill());
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
    const status = response.status;
    let head = `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\n`;
    for (const [name, value] of response.headers) {
      if (!HOP_BY_HOP.has(name)) head += `${name}: ${value}\r\n`;
    }
    if (!request.keepAlive) head += "connection: close\r\n";
    const streaming = /^text\/event-stream/.test(
      response.headers.get("content-type") ?? "",
    );
    const body = response.body;
    if (!streaming || body === null) {
      const bytes = body === null
        ? new Uint8Array()
        : new Uint8Array(await response.arrayBuffer());
      head += `content-length: ${bytes.length}\r\n\r\n`;
      const sent = request.method === "HEAD" ? new Uint8Array() : bytes;
      await this.#write(concat([encoder.encode(head), sent]));
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
      this.#buffered <= this.#limits.max_head_bytes
    ) {
      if (!await this.#fill()) {
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
          if (error instanceof BadRequest && !this.#closed) {
            await this.#refuseAndClose(error.status, error.message);
          }
          return;
        }
        fresh = false;
        if (head === null || this.#closed) return;
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
          const piece = await this.#bodyPiece(framing, deadline);
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
        `Bad request: ${(error as Error).message}`,
      );
      return false;
    }
    let response: Response;
    try {
      response = await this.#server.handler(request);
    } catch (error) {
      response = this.#server.refusal(
        500,
        `Internal error: ${(error as Error).message}`,
      );
    }
    if (this.#closed) return false;
    const broken = failed as BadRequest | null;
    if (broken !== null) {
      await this.#refuseAndClose(broken.status, broken.message);
      return false;
    }
    // A body left unread cannot be skipped safely: answer, then close.
    const whole = Connection.#ended(framing);
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
    for (const connection of this.#connections) {
      if (connection.state !== "waiting") continue;
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
    oldest.close();
    return true;
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
      if (!this.#evict()) {
        void this.#busy(conn);
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

  /** Every connection is busy: this one is told so and closed. */
  async #busy(conn: Deno.Conn): Promise<void> {
    const timer = setTimeout(() => conn.close(), 1_000);
    try {
      const response = this.refusal(
        503,
        "Service unavailable: the dashboard has too many connections",
      );
      const body = await response.text();
      let head = "HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n";
      for (const [name, value] of response.headers) {
        if (!HOP_BY_HOP.has(name)) head += `${name}: ${value}\r\n`;
      }
      const bytes = encoder.encode(body);
      await conn.write(concat([
        encoder.encode(`${head}content-length: ${bytes.length}\r\n\r\n`),
        bytes,
      ]));
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
