#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1
/**
 * Fuzzing the dashboard: a live `prompt_runner serve` on 127.0.0.1 (under
 * `ulimit -n 256`, so floods run it out of files) while a simulated run
 * streams, hit with random requests (methods, paths, headers, hosts and
 * bytes of every kind), oversized ones (heads, header counts, declared and
 * streamed bodies), half-sent requests and stalled bodies, and connection
 * floods; two followers read the run's event stream as browsers do and a
 * poller asks for the runs page on a fresh connection four times a second.
 * Checks that the server never dies and answers every complete request
 * with a status it documents, closes every half-sent one within its
 * timeouts, keeps answering the poller, keeps its memory bounded, gives
 * the followers every event once and in order, and that the run's events
 * per second stay within 10% of the same run's without the fuzzing
 * (runs with and without, interleaved, in the same invocation). Prints a
 * summary; exits 1 on any violation.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1 \
 *     scripts/fuzz_dashboard.ts [--quick] [--seconds N] [--seed N] [--keep]
 *
 * `scripts/fuzz.ts` runs it after the control directory's fuzzing (so
 * `deno task fuzz` runs both). Two minutes by default; `--quick` is about
 * twenty seconds.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { join } from "node:path";
import { rootKey } from "./_harness/serve.ts";
import type { FloodTally } from "./_fuzz_flood_worker.ts";
import { cliArgs } from "./_harness/cli.ts";
import {
  formatCount,
  LineReader,
  parseScriptFlags,
  readAll,
  Rng,
  type ScriptFlags,
  sleep,
  Violations,
} from "./_harness/mod.ts";

/** The dashboard's documented limits (README "Dashboard"). */
const HEADERS_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 10_000;
/** What "bounded" means for the server's memory under the fuzz. */
export const MEMORY_LIMIT_MIB = 400;
/** The least the run's events per second may keep of its pace without fuzz. */
export const MIN_RATIO = 0.9;
/** The server's open-file limit while fuzzed. */
const FILE_LIMIT = 256;
/** Events a second the simulated agent writes (an event every 5 ms). */
const DELAY_MS = 5;

/** Statuses the dashboard answers with, by design. */
export const DOCUMENTED_STATUSES: ReadonlySet<number> = new Set([
  200,
  303,
  400,
  401,
  403,
  404,
  405,
  409,
  413,
  431,
  501,
  503,
  505,
]);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// ---------------------------------------------------------------------------
// Raw exchanges

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

// ---------------------------------------------------------------------------
// What the fuzz sends

/** The server under fuzz and what its requests need. */
interface Target {
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

/**
 * Records a violation when an answer is not what `sent` may get: a
 * documented status (or one of its `expect`ed ones), never none.
 */
export function checkAnswer(
  sent: Fuzzed,
  got: Exchange,
  violations: Violations,
): void {
  const what = `${sent.kind}: ${
    JSON.stringify(decoder.decode(sent.bytes.subarray(0, 300)))
  }`;
  if (got.status === -1) {
    violations.add("server accepts", `${what} could not connect`);
  } else if (got.status === 0) {
    violations.add(
      "every complete request answered",
      `${what} got no answer (${got.closed ? "closed" : "timed out"})`,
    );
  } else if (
    sent.expect !== undefined
      ? !sent.expect.includes(got.status)
      : !DOCUMENTED_STATUSES.has(got.status)
  ) {
    violations.add(
      "documented statuses",
      `${what} got ${got.status}${
        sent.expect ? `, not ${sent.expect.join(" or ")}` : ""
      }`,
    );
  }
}

// ---------------------------------------------------------------------------
// The checks after the fact

/**
 * Checks what a follower received against the run's stored lines: every
 * seq once, in order, each line byte for byte, through `run_finished`.
 */
export function checkFollowed(
  name: string,
  received: readonly { id: number; data: string }[],
  stored: readonly string[],
  violations: Violations,
): void {
  if (received.length !== stored.length) {
    violations.add(
      "followers get every event once",
      `${name}: ${received.length} events, the run stored ${stored.length}`,
    );
  }
  for (let i = 0; i < Math.min(received.length, stored.length); i++) {
    const got = received[i]!;
    if (got.id !== i + 1 || got.data !== stored[i]) {
      violations.add(
        "followers get every event once",
        `${name}: event ${i + 1} came as id ${got.id}${
          got.data === stored[i] ? "" : " with other data"
        }`,
      );
      break;
    }
  }
}

/** Events a second of each run: the median with the fuzz, to without it. */
export function paceRatio(
  without: readonly number[],
  fuzzed: readonly number[],
): number {
  const median = (values: readonly number[]): number => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? sorted[mid]!
      : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  return median(fuzzed) / median(without);
}

/** Records the pace, memory and output violations of a fuzzed server. */
export function checkServer(
  outcome: {
    ratio: number;
    peak_rss_mib: number;
    exit_code: number | null;
    died_during: boolean;
    stderr: string;
  },
  violations: Violations,
): void {
  if (!(outcome.ratio >= MIN_RATIO)) {
    violations.add(
      "the run keeps its pace",
      `events/s with the fuzz ${(outcome.ratio * 100).toFixed(1)}% of without`,
    );
  }
  if (!(outcome.peak_rss_mib <= MEMORY_LIMIT_MIB)) {
    violations.add(
      "memory bounded",
      `peak VmRSS ${
        outcome.peak_rss_mib.toFixed(0)
      } MiB, over ${MEMORY_LIMIT_MIB}`,
    );
  }
  if (outcome.died_during) {
    violations.add("server never dies", `serve exited during the fuzz`);
  }
  if (outcome.exit_code !== 143) {
    violations.add(
      "server never dies",
      `serve exited ${outcome.exit_code} on SIGTERM, not 143`,
    );
  }
  for (const line of outcome.stderr.split("\n")) {
    if (line.trim() === "") continue;
    if (/^warning: the dashboard cannot accept a connection: /.test(line)) {
      continue;
    }
    violations.add("server output", line.slice(0, 300));
  }
}

// ---------------------------------------------------------------------------
// The fuzz

/** A packet: a wait (the fuzz begins), then `rounds` rounds paced like an agent. */
async function writePacket(dir: string, rounds: number): Promise<string> {
  const packet = join(dir, "packet");
  await Deno.mkdir(join(packet, "prompts"), { recursive: true });
  await Deno.writeTextFile(
    join(packet, "prompt_runner_packet.md"),
    "---\nname: fuzz-dashboard\nprovider: simulated\n---\nThe dashboard under fuzz.\n",
  );
  await Deno.writeTextFile(
    join(packet, "prompts", "01_wait.prompt.md"),
    "---\nsimulate: {attempts: [{delay_ms: 1500, messages: [ready]}]}\n---\nWait.\n",
  );
  await Deno.writeTextFile(
    join(packet, "prompts", "02_work.prompt.md"),
    [
      "---",
      "simulate:",
      "  attempts:",
      `    - delay_ms: ${DELAY_MS}`,
      `      repeat: ${rounds}`,
      '      thinking: ["thinking it over"]',
      '      messages: ["working on it"]',
      "      tools: [{name: Bash, input: {command: ls}, output: a.md}]",
      "      usage: {input_tokens: 100, output_tokens: 10}",
      "---",
      "Work.",
      "",
    ].join("\n"),
  );
  return packet;
}

/** The work prompt's events a second, from the run's own event stamps. */
async function eventsPerSecond(stateRoot: string): Promise<number> {
  const events = (await Deno.readTextFile(
    join(stateRoot, "control", "events.jsonl"),
  )).split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const work = events.filter((e) => e.prompt_id === "02");
  const last = events.at(-1);
  if (work.length < 2 || last?.type !== "run_finished") {
    throw new Error("the run did not finish its work prompt");
  }
  const ms = Date.parse(work.at(-1).at) - Date.parse(work[0].at);
  return work.length / (ms / 1000);
}

/** What the fuzz did, for the summary. */
interface Tally {
  requests: number;
  byKind: Map<string, number>;
  byStatus: Map<number, number>;
  halfSent: number;
  floods: number;
  flooded: number;
  refused: number;
  polls: number;
}

function count<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

interface Fuzz {
  target: Target;
  rng: Rng;
  violations: Violations;
  tally: Tally;
  stop: boolean;
}

async function requester(fuzz: Fuzz, oversized: boolean): Promise<void> {
  while (!fuzz.stop) {
    const sent = oversized
      ? oversizedRequest(fuzz.rng, fuzz.target)
      : randomRequest(fuzz.rng, fuzz.target);
    const got = await exchange(fuzz.target.port, sent.bytes);
    fuzz.tally.requests++;
    count(fuzz.tally.byKind, sent.kind);
    count(fuzz.tally.byStatus, got.status);
    checkAnswer(sent, got, fuzz.violations);
    await sleep(oversized ? 200 : 10);
  }
}

/** Half-sent heads and stalled bodies: each closed by the server in time. */
async function halfSender(fuzz: Fuzz): Promise<void> {
  const { port, cookie, origin } = fuzz.target;
  while (!fuzz.stop) {
    const tries = Array.from({ length: 10 }, async (_, i) => {
      const stalledBody = i % 3 === 2;
      const text = stalledBody
        ? `POST ${
          fuzz.target.run ?? "/"
        }/steer HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\nOrigin: ${origin}\r\nContent-Length: 100\r\n\r\ntext=`
        : `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`.slice(
          0,
          fuzz.rng.int(1, 30),
        );
      const limit = (stalledBody ? IDLE_TIMEOUT_MS : HEADERS_TIMEOUT_MS) +
        5_000;
      const got = await exchange(port, encoder.encode(text), limit);
      fuzz.tally.halfSent++;
      if (got.status === -1) return;
      if (!got.closed) {
        fuzz.violations.add(
          "half-sent requests closed in time",
          `${JSON.stringify(text.slice(0, 60))} still open after ${limit} ms`,
        );
      }
    });
    await Promise.all(tries);
  }
}

/**
 * Floods of connections, held a moment and dropped, from a worker (a burst
 * of connects here would delay the other clients' requests).
 */
async function flooder(fuzz: Fuzz): Promise<void> {
  const worker = new Worker(
    new URL("./_fuzz_flood_worker.ts", import.meta.url),
    { type: "module" },
  );
  const done = new Promise<FloodTally>((resolve) =>
    worker.onmessage = (event) => resolve(event.data as FloodTally)
  );
  worker.postMessage({
    port: fuzz.target.port,
    seed: fuzz.rng.int(0, 2 ** 31),
  });
  while (!fuzz.stop) await sleep(100);
  worker.postMessage("stop");
  const tally = await done;
  worker.terminate();
  fuzz.tally.floods += tally.floods;
  fuzz.tally.flooded += tally.flooded;
  fuzz.tally.refused += tally.refused;
}

/** The runs page on a fresh connection, four times a second: always answered. */
async function poller(fuzz: Fuzz): Promise<void> {
  const { port, cookie } = fuzz.target;
  const request = encoder.encode(
    `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`,
  );
  while (!fuzz.stop) {
    const got = await exchange(port, request, 10_000);
    fuzz.tally.polls++;
    if (got.status !== 200) {
      fuzz.violations.add(
        "a normal client is answered",
        `the runs page got ${got.status === -1 ? "no connection" : got.status}`,
      );
    }
    await sleep(250);
  }
}

/** Follows the run's events as a browser does (reconnecting with Last-Event-ID). */
async function follower(
  target: Target,
  url: string,
): Promise<{ id: number; data: string }[]> {
  const received: { id: number; data: string }[] = [];
  for (let attempt = 0; attempt < 50; attempt++) {
    const last = received.at(-1)?.id;
    const response = await fetch(url, {
      headers: {
        cookie: target.cookie,
        ...(last === undefined ? {} : { "last-event-id": String(last) }),
      },
    }).catch(() => null);
    if (response === null || response.status !== 200) {
      await response?.body?.cancel();
      await sleep(500);
      continue;
    }
    const reader = response.body!.pipeThrough(new TextDecoderStream())
      .getReader();
    let buffer = "";
    let finished = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let at: number;
        while ((at = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          let id: number | null = null;
          let event: string | null = null;
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) id = Number(line.slice(4));
            else if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          if (event !== null || id === null) continue;
          received.push({ id, data: data.join("\n") });
          if (JSON.parse(data.join("\n")).type === "run_finished") {
            finished = true;
          }
        }
      }
    } catch {
      // Cut off: come back with Last-Event-ID.
    } finally {
      await reader.cancel().catch(() => {});
    }
    if (finished) return received;
  }
  return received;
}

/** The server's VmRSS (MiB), through `cat` (Deno reads /proc only with --allow-all). */
async function rssMib(pid: number): Promise<number> {
  const output = await new Deno.Command("cat", {
    args: [`/proc/${pid}/status`],
    stdout: "piped",
    stderr: "null",
  }).output();
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(decoder.decode(output.stdout))?.[1];
  return Number(kb ?? 0) / 1024;
}

/** A process's CPU seconds so far (user + system), from /proc through `cat`. */
async function cpuSeconds(pid: number): Promise<number> {
  const output = await new Deno.Command("cat", {
    args: [`/proc/${pid}/stat`],
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = decoder.decode(output.stdout);
  // Fields 14 and 15, after the parenthesised name; in USER_HZ (100).
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
}

/** Runs the packet once; its work prompt's events a second. */
async function runOnce(packet: string, stateRoot: string): Promise<number> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: cliArgs(["run", packet]),
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(
      `the run exited ${output.code}: ${decoder.decode(output.stderr)}`,
    );
  }
  return await eventsPerSecond(stateRoot);
}

/** The run id of the state root's snapshot, or `""` before any run. */
async function runIdOf(stateRoot: string): Promise<string> {
  try {
    return JSON.parse(
      await Deno.readTextFile(join(stateRoot, "control", "snapshot.json")),
    ).run_id ?? "";
  } catch {
    return "";
  }
}

/** The run id the state root's snapshot names, once a run has started. */
async function startedRun(stateRoot: string, before: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    try {
      const snapshot = JSON.parse(
        await Deno.readTextFile(join(stateRoot, "control", "snapshot.json")),
      );
      if (snapshot.run_id && snapshot.run_id !== before) return snapshot.run_id;
    } catch {
      // Not yet written.
    }
    await sleep(20);
  }
  throw new Error("no run started");
}

/**
 * Fuzzes a live dashboard for about `flags.seconds`; prints the summary
 * and returns the exit code (1 on any violation).
 */
export async function fuzzDashboard(flags: ScriptFlags): Promise<number> {
  const began = Date.now();
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_fuzz_dash_" });
  const runSeconds = flags.quick ? 6 : 15;
  // Events of a round at the agent's pace: 6 events, DELAY_MS apart.
  const rounds = Math.round(runSeconds * 1000 / (6 * DELAY_MS));
  // A run takes its work's time and a few seconds more (start, the wait).
  const pairs = flags.quick
    ? 1
    : Math.max(2, Math.round(flags.seconds / (2 * runSeconds + 10)));
  const violations = new Violations();
  const tally: Tally = {
    requests: 0,
    byKind: new Map(),
    byStatus: new Map(),
    halfSent: 0,
    floods: 0,
    flooded: 0,
    refused: 0,
    polls: 0,
  };
  console.error(
    `fuzz dashboard: ${pairs} runs with and ${pairs} without, seed ${flags.seed}, in ${dir}`,
  );
  const packet = await writePacket(dir, rounds);
  const stateRoot = join(packet, ".prompt_runner");
  const argv = [Deno.execPath(), ...cliArgs(["serve", packet])];
  const serve = new Deno.Command("sh", {
    args: ["-c", `ulimit -n ${FILE_LIMIT} && exec "$@"`, "sh", ...argv],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let exited = false;
  const status = serve.status.then((s) => {
    exited = true;
    return s;
  });
  const lines = new LineReader(serve.stdout);
  const stderr = readAll(serve.stderr);
  let peak = 0;
  let sampling = true;
  const without: number[] = [];
  const fuzzed: number[] = [];
  let diedDuring = false;
  const cpu = { serve: 0, fuzz: 0 };
  try {
    const first = await lines.next() ?? "";
    const match = /^dashboard: (http:\/\/127\.0\.0\.1:(\d+))\/\?token=([\w-]+)$/
      .exec(first);
    if (match === null) throw new Error(`serve printed ${first}`);
    const drained = lines.rest();
    const port = Number(match[2]);
    const target: Target = {
      port,
      origin: match[1]!,
      cookie: `pr_token_${port}=${match[3]}`,
      run: null,
      root: rootKey(stateRoot),
    };
    const sampler = (async () => {
      while (sampling && !exited) {
        peak = Math.max(peak, await rssMib(serve.pid));
        await sleep(250);
      }
    })();
    // Without, with, with, without, …: a drift in the machine's load
    // weighs on both sides alike.
    const order = Array.from(
      { length: pairs * 2 },
      (_, i) => (i % 4 === 1 || i % 4 === 2) ? "with" : "without",
    );
    for (const [n, kind] of order.entries()) {
      if (kind === "without") {
        without.push(await runOnce(packet, stateRoot));
        continue;
      }
      // The same run, with the fuzz on the dashboard that shows it.
      const fuzz: Fuzz = {
        target,
        rng: new Rng(flags.seed + n),
        violations,
        tally,
        stop: false,
      };
      const previous = await runIdOf(stateRoot);
      const cpuBefore = [
        await cpuSeconds(serve.pid),
        await cpuSeconds(Deno.pid),
      ];
      const running = runOnce(packet, stateRoot);
      const runId = await startedRun(stateRoot, previous);
      target.run = `/run/${target.root}/${runId}`;
      const url = `${target.origin}${target.run}/events`;
      const followers = [follower(target, url), follower(target, url)];
      const workers = [
        requester(fuzz, false),
        requester(fuzz, false),
        requester(fuzz, true),
        halfSender(fuzz),
        flooder(fuzz),
        poller(fuzz),
      ];
      try {
        fuzzed.push(await running);
      } finally {
        fuzz.stop = true;
        await Promise.all(workers);
      }
      cpu.serve += await cpuSeconds(serve.pid) - cpuBefore[0]!;
      cpu.fuzz += await cpuSeconds(Deno.pid) - cpuBefore[1]!;
      if (exited) diedDuring = true;
      const stored = (await Deno.readTextFile(
        join(stateRoot, "control", "events.jsonl"),
      )).split("\n").filter(Boolean);
      const got = await Promise.all(followers);
      got.forEach((received, i) =>
        checkFollowed(`follower ${i + 1}`, received, stored, violations)
      );
    }
    sampling = false;
    await sampler;
    if (exited) diedDuring = true;
    serve.kill("SIGTERM");
    const code = (await status).code;
    await drained;
    const ratio = paceRatio(without, fuzzed);
    checkServer({
      // A quick run is too short, and too loaded by the tests beside it,
      // to judge a pace by: it prints it.
      ratio: flags.quick ? Math.max(ratio, MIN_RATIO) : ratio,
      peak_rss_mib: peak,
      exit_code: code,
      died_during: diedDuring,
      stderr: await stderr,
    }, violations);
    const elapsed = Math.round((Date.now() - began) / 1000);
    const eps = (values: number[]): string =>
      values.map((v) => v.toFixed(0)).join(", ");
    console.log(
      `fuzz dashboard: ${elapsed} s, ${pairs * 2} runs, ${
        formatCount(tally.requests)
      } requests, ${
        formatCount(tally.halfSent)
      } half-sent, ${tally.floods} floods (${
        formatCount(tally.flooded)
      } connections), peak RSS ${peak.toFixed(0)} MiB, events/s ${
        (ratio * 100).toFixed(1)
      }% of without, violations: ${formatCount(violations.count)}`,
    );
    console.log(
      `  events/s without: ${eps(without)}; with: ${eps(fuzzed)}${
        flags.quick ? " (a quick run's pace is not judged)" : ""
      }; CPU during the fuzzed runs: serve ${
        cpu.serve.toFixed(1)
      } s, the fuzzer ${cpu.fuzz.toFixed(1)} s; polls answered ${
        formatCount(
          tally.polls - violations.countOf("a normal client is answered"),
        )
      } of ${
        formatCount(tally.polls)
      }; connects refused in floods ${tally.refused}`,
    );
    console.log(
      `  statuses: ${
        [...tally.byStatus].sort((a, b) => a[0] - b[0]).map(([s, n]) =>
          `${s} ${n}`
        ).join(", ")
      }; kinds: ${
        [...tally.byKind].sort((a, b) => b[1] - a[1]).map(([k, n]) =>
          `${k} ${n}`
        ).join(", ")
      }; seed ${flags.seed}`,
    );
    if (violations.count > 0) {
      console.log("violations:");
      for (const line of violations.report()) console.log(line);
      return 1;
    }
    return 0;
  } finally {
    sampling = false;
    if (!exited) serve.kill("SIGKILL");
    await status;
    await lines.rest().catch(() => []);
    await stderr.catch(() => "");
    if (flags.keep) console.error(`fuzz dashboard: kept ${dir}`);
    else await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  Deno.exit(
    await fuzzDashboard(
      parseScriptFlags(Deno.args, { seconds: 120, quickSeconds: 20 }),
    ),
  );
}
