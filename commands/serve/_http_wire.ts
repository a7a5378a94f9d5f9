/**
 * The dashboard's HTTP/1.1 wire format: what a server allows its clients,
 * a request's head parsed (and refused, with its status, when malformed),
 * the reasons of the statuses it sends, and the headers that are the
 * server's own.
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
  /**
   * How long a connection waits for a request before it may be closed to
   * make room (a newcomer at the cap waits for that instead): a client
   * that sends its request this soon after connecting is always read.
   */
  room_grace_ms: number;
}

/** What the server does with a request. */
export type HttpHandler = (request: Request) => Promise<Response>;

/** A response for a request the server refuses itself (400, 408, 503…). */
export type Refusal = (status: number, message: string) => Response;

/** What a connection needs of its server. */
export interface ConnectionHost {
  /** Answers each request. */
  readonly handler: HttpHandler;
  /** The body of the server's own refusals. */
  readonly refusal: Refusal;
  /** Whether the server is stopping (no request is kept alive). */
  readonly stopping: boolean;
}

/** Encodes the heads the server writes. */
export const encoder: TextEncoder = new TextEncoder();

/** A request the connection cannot serve: answered, then closed. */
export class BadRequest extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export const REASONS: Readonly<Record<number, string>> = {
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
export const HOP_BY_HOP = new Set([
  "connection",
  "content-length",
  "keep-alive",
  "transfer-encoding",
]);

export function latin1(bytes: Uint8Array): string {
  let text = "";
  for (let at = 0; at < bytes.length; at += 8192) {
    text += String.fromCharCode(...bytes.subarray(at, at + 8192));
  }
  return text;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** How a request's body is framed. */
export type Framing =
  | { kind: "none" }
  | { kind: "length"; left: number }
  | { kind: "chunked"; left: number; done: boolean; first: boolean };

/** A parsed request head. */
export interface Head {
  method: string;
  target: string;
  version: "1.0" | "1.1";
  headers: [string, string][];
  host: string;
  framing: Framing;
  keepAlive: boolean;
  expectContinue: boolean;
}

export function parseHead(text: string): Head {
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

/**
 * A response's status line and headers (hop-by-hop ones dropped, and
 * `connection: close` unless kept alive), without the line that ends them.
 */
export function responseHead(response: Response, keepAlive: boolean): string {
  const status = response.status;
  let head = `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\n`;
  for (const [name, value] of response.headers) {
    if (!HOP_BY_HOP.has(name)) head += `${name}: ${value}\r\n`;
  }
  return keepAlive ? head : head + "connection: close\r\n";
}

/**
 * A response with a length, as bytes: its head, then `body` (left out,
 * its length kept, when answering HEAD).
 */
export function lengthResponse(
  head: string,
  body: Uint8Array,
  headOnly = false,
): Uint8Array {
  const start = `${head}content-length: ${body.length}\r\n\r\n`;
  return concat([encoder.encode(start), headOnly ? new Uint8Array() : body]);
}

/** Whether a body has been read to its end. */
export function bodyEnded(framing: Framing): boolean {
  return framing.kind === "none" ||
    (framing.kind === "length" && framing.left === 0) ||
    (framing.kind === "chunked" && framing.done);
}
