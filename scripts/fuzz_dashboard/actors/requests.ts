/**
 * What the dashboard fuzz sends: raw exchanges below `fetch`, and random
 * and oversized requests (methods, paths, headers, hosts and bytes of every
 * kind).
 *
 * @module
 */

import type { Rng } from "../../_harness/mod.ts";

export const encoder = new TextEncoder();
export const decoder = new TextDecoder();

/** What a raw exchange came to. */
export interface Exchange {
  /** The response's status; 0 when the server closed without one, -1 when it would not connect. */
  status: number;
  /** Whether the server closed the connection (rather than our timeout). */
  closed: boolean;
}

/** Finds the end of a response head in `bytes`, or -1. */
function headEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (
      bytes[i] === 0x0a && bytes[i - 1] === 0x0d && bytes[i - 2] === 0x0a &&
      bytes[i - 3] === 0x0d
    ) return i + 1;
  }
  return -1;
}

/**
 * Sends `request` on a new connection and reads one response (its head,
 * and its body when it has a length), or until the server closes it, or
 * `timeoutMs`.
 */
export async function exchange(
  port: number,
  request: Uint8Array,
  timeoutMs = 15_000,
): Promise<Exchange> {
  let conn: Deno.Conn;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
  } catch {
    return { status: -1, closed: true };
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      conn.close();
    } catch {
      // Closed.
    }
  }, timeoutMs);
  // The server may answer (431, 413) before it has read it all.
  const writing = conn.write(request).catch(() => 0);
  let got = new Uint8Array();
  let status = 0;
  let closed = false;
  try {
    const buffer = new Uint8Array(16 * 1024);
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) {
        closed = !timedOut;
        break;
      }
      const next = new Uint8Array(got.length + n);
      next.set(got);
      next.set(buffer.subarray(0, n), got.length);
      got = next;
      const end = headEnd(got);
      if (end < 0) continue;
      const head = decoder.decode(got.subarray(0, end));
      status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(head);
      if (length === null) break; // chunked (a stream): the head will do
      if (got.length - end >= Number(length[1])) break;
    }
  } finally {
    clearTimeout(timer);
    await writing;
    try {
      conn.close();
    } catch {
      // Closed.
    }
  }
  return { status, closed: closed || status !== 0 };
}

/** The server under fuzz and what its requests need. */
export interface Target {
  port: number;
  origin: string;
  cookie: string;
  /** `/run/KEY/RUN`, once the run is known. */
  run: string | null;
  root: string;
}

/** A request that is complete (the server can answer it) of a random kind. */
export interface Fuzzed {
  /** Its kind, for the summary. */
  kind: string;
  /** Its bytes. */
  bytes: Uint8Array;
  /** The statuses it may get, besides the documented ones (none: any of those). */
  expect?: number[];
}

const METHODS = [
  "GET",
  "GET",
  "POST",
  "HEAD",
  "PUT",
  "DELETE",
  "OPTIONS",
  "PATCH",
  "TRACE",
  "CONNECT",
  "BREW",
  "get",
  "G\u00e9T",
  "",
];

function randomText(rng: Rng, n: number): string {
  const alphabet =
    "abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?#[]%\\\"<> \t";
  let text = "";
  for (let i = 0; i < n; i++) text += rng.pick([...alphabet]);
  return text;
}

function randomPath(rng: Rng, target: Target): string {
  const run = target.run ?? `/run/${target.root}/nope`;
  return rng.pick([
    "/",
    "/runs/stream",
    "/static/app.js",
    "/static/app.css",
    "/static/../../etc/passwd",
    `${run}`,
    `${run}/events`,
    `${run}/events?after=${rng.int(0, 99999)}`,
    `${run}/rendered?from=${rng.int(-5, 50)}&to=${rng.int(-5, 5000)}`,
    `${run}/contract/${randomText(rng, 4)}`,
    `${run}/steer`,
    `${run}/view`,
    `${run}/amend`,
    `${run}/relax`,
    `/run/${encodeURIComponent(randomText(rng, 8))}/x`,
    "//evil.example/x",
    `/?token=${randomText(rng, 43)}`,
    "/%ff%fe%00",
    "/" + "a".repeat(rng.int(100, 8000)),
    "/" + encodeURIComponent(randomText(rng, rng.int(1, 200))),
    "*",
    "http://evil.example/",
  ]);
}

function randomHost(rng: Rng, target: Target): string | null {
  return rng.pick([
    `127.0.0.1:${target.port}`,
    `127.0.0.1:${target.port}`,
    `localhost:${target.port}`,
    `[::1]:${target.port}`,
    "evil.example",
    `evil.example:${target.port}`,
    "",
    "a b",
    randomText(rng, 12),
    null,
  ]);
}

/** A random request: a request line, headers and maybe a body, all of them complete. */
export function randomRequest(rng: Rng, target: Target): Fuzzed {
  if (rng.chance(0.1)) {
    // Bytes, then the end of a head.
    return {
      kind: "random bytes",
      bytes: new Uint8Array([...rng.bytes(rng.int(1, 400)), 13, 10, 13, 10]),
    };
  }
  const method = rng.pick(METHODS);
  const version = rng.pick([
    "HTTP/1.1",
    "HTTP/1.1",
    "HTTP/1.0",
    "HTTP/2.0",
    "HTTX/1.1",
    "",
  ]);
  const lines = [`${method} ${randomPath(rng, target)} ${version}`];
  const host = randomHost(rng, target);
  if (host !== null) lines.push(`Host: ${host}`);
  if (rng.chance(0.1)) lines.push(`Host: ${randomHost(rng, target) ?? "x"}`);
  if (rng.chance(0.7)) lines.push(`Cookie: ${target.cookie}`);
  if (rng.chance(0.5)) {
    lines.push(
      `Origin: ${rng.pick([target.origin, "http://evil.example", "null"])}`,
    );
  }
  for (let i = rng.int(0, 5); i > 0; i--) {
    lines.push(
      rng.pick([
        `X-${randomText(rng, 5).replace(/[^a-z0-9]/g, "a")}: ${
          randomText(rng, 20)
        }`,
        `${randomText(rng, 6)}: ${randomText(rng, 6)}`,
        "Accept: application/json",
        "Accept: text/event-stream",
        `Last-Event-ID: ${
          rng.pick(["1", "-1", "abc", "99999999999999999999"])
        }`,
        " folded continuation",
        "Expect: 100-continue",
        "Connection: keep-alive",
        "Transfer-Encoding: gzip",
        "Content-Length: abc",
        "Content-Length: 5, 6",
      ]),
    );
  }
  let body = new Uint8Array();
  if (rng.chance(0.3)) {
    const text = rng.pick([
      "text=hello+from+the+fuzzer",
      "thinking=loud",
      "prompt=..%2F..%2Fetc&clause=files_exist&value=x&reason=r",
      "%%%%&&&===",
      randomText(rng, rng.int(0, 300)),
    ]);
    body = encoder.encode(text);
    if (rng.chance(0.3)) {
      lines.push("Transfer-Encoding: chunked");
      body = encoder.encode(
        rng.chance(0.8)
          ? `${body.length.toString(16)}\r\n${text}\r\n0\r\n\r\n`
          : `zz\r\n${text}\r\n`,
      );
    } else {
      lines.push(`Content-Length: ${body.length}`);
      lines.push("Content-Type: application/x-www-form-urlencoded");
    }
  }
  lines.push("Connection: close");
  const head = encoder.encode(lines.join("\r\n") + "\r\n\r\n");
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  bytes.set(body, head.length);
  return { kind: "random request", bytes };
}

/** A request over one of the server's limits, and the status it must get. */
export function oversizedRequest(rng: Rng, target: Target): Fuzzed {
  const host = `Host: 127.0.0.1:${target.port}\r\n`;
  const auth = `Cookie: ${target.cookie}\r\nOrigin: ${target.origin}\r\n`;
  const steer = `${target.run ?? `/run/${target.root}/nope`}/steer`;
  switch (rng.int(0, 3)) {
    case 0:
      return {
        kind: "head over 32 KiB",
        bytes: encoder.encode(
          `GET / HTTP/1.1\r\n${host}X-Big: ${"b".repeat(40_000)}\r\n\r\n`,
        ),
        expect: [431],
      };
    case 1:
      return {
        kind: "200 headers",
        bytes: encoder.encode(
          `GET / HTTP/1.1\r\n${host}${"X-A: 1\r\n".repeat(200)}\r\n`,
        ),
        expect: [431],
      };
    case 2:
      return {
        kind: "declared body over the limit",
        bytes: encoder.encode(
          `POST ${steer} HTTP/1.1\r\n${host}${auth}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${
            rng.int(300_000, 2_000_000_000)
          }\r\n\r\ntext=`,
        ),
        expect: [413],
      };
    default: {
      // 1 MiB of a chunked body: refused as it streams.
      const chunk = `10000\r\n${"x".repeat(0x10000)}\r\n`;
      return {
        kind: "streamed body over the limit",
        bytes: encoder.encode(
          `POST ${steer} HTTP/1.1\r\n${host}${auth}Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n${
            chunk.repeat(16)
          }0\r\n\r\n`,
        ),
        expect: [413],
      };
    }
  }
}
