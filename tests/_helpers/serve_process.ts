/**
 * A `prompt_runner serve` process for HTTP-level tests, and the raw
 * connections that talk to it below `fetch` (a `Host` of one's choosing,
 * half-sent requests, floods).
 *
 * @module
 */

import { freePort, Inspector, rootKey } from "../../scripts/_harness/serve.ts";
import { LineReader, readAll } from "./lines.ts";
import { type LiveRun, startRun, waitForSnapshot } from "./live_run.ts";
import {
  cliArgs,
  cliEnv,
  ROOT,
  type RunCliOptions,
  waitFor,
} from "./run_cli.ts";
import { longPrompt, makePacket, type TempPacket } from "./temp_packet.ts";

export { freePort, Inspector, rootKey };

/** The URL line `serve` prints first. */
export const URL_LINE =
  /^dashboard: (http:\/\/([^/]+):(\d+))\/\?token=([A-Za-z0-9_-]{32,256})$/;

/** A running `prompt_runner serve`. */
export interface ServeProcess extends AsyncDisposable {
  /** The server's process id. */
  pid: number;
  /** The first URL's origin (`http://HOST:PORT`). */
  origin: string;
  /** The port it listens on. */
  port: number;
  /** The access token. */
  token: string;
  /** The cookie header that carries it (`pr_token_PORT=TOKEN`). */
  cookie: string;
  /** Every stdout line so far. */
  lines: readonly string[];
  /** Whether the process has exited. */
  exited(): boolean;
  /** Stops the server (SIGTERM) and returns its exit code and stderr. */
  stop(): Promise<{ code: number; stderr: string }>;
}

/** Options for {@linkcode serve}. */
export interface ServeOptions extends RunCliOptions {
  /** Start it under `ulimit -n` of this many open files. */
  fileLimit?: number;
}

/** Starts `prompt_runner serve ARGS` and reads its URL line. */
export async function serve(
  args: string[],
  options: ServeOptions = {},
): Promise<ServeProcess> {
  const argv = [
    Deno.execPath(),
    ...cliArgs(["serve", ...args], options.denoFlags, options.fault),
  ];
  const env = cliEnv(options);
  const child = new Deno.Command(
    options.fileLimit === undefined ? argv[0]! : "sh",
    {
      args: options.fileLimit === undefined
        ? argv.slice(1)
        : ["-c", `ulimit -n ${options.fileLimit} && exec "$@"`, "sh", ...argv],
      cwd: options.cwd ?? ROOT,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    },
  ).spawn();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const lines = new LineReader(child.stdout);
  const stderr = readAll(child.stderr);
  const first = await lines.next();
  const match = URL_LINE.exec(first ?? "");
  if (match === null) {
    if (!exited) child.kill("SIGKILL");
    await status;
    await lines.rest();
    throw new Error(`no URL line: ${first}\n${await stderr}`);
  }
  const drained = lines.rest();
  let stopped: Promise<{ code: number; stderr: string }> | null = null;
  const stop = (): Promise<{ code: number; stderr: string }> => {
    stopped ??= (async () => {
      if (!exited) child.kill("SIGTERM");
      const timer = setTimeout(() => {
        if (!exited) child.kill("SIGKILL");
      }, 10_000);
      try {
        await drained;
        return { code: (await status).code, stderr: await stderr };
      } finally {
        clearTimeout(timer);
      }
    })();
    return stopped;
  };
  const port = Number(match[3]);
  return {
    pid: child.pid,
    origin: match[1]!,
    port,
    token: match[4]!,
    cookie: `pr_token_${port}=${match[4]}`,
    lines: lines.seen,
    exited: () => exited,
    stop,
    async [Symbol.asyncDispose](): Promise<void> {
      await stop();
    },
  };
}

/** A process's memory from `/proc/PID/status` (KiB). */
export async function memoryOf(
  pid: number,
): Promise<{ rss: number; hwm: number }> {
  // Deno reads /proc only with --allow-all; cat may.
  const output = await new Deno.Command("cat", {
    args: [`/proc/${pid}/status`],
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  const field = (name: string): number =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

/**
 * What a process holds open: `ls -l /proc/PID/fd`'s lines (Deno asks for
 * --allow-all to read /proc itself).
 */
export async function fdListing(pid: number): Promise<string[]> {
  const output = await new Deno.Command("ls", {
    args: ["-l", `/proc/${pid}/fd`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(output.stdout).split("\n")
    .filter((line) => line.includes(" -> "));
}

/** How many files a process has open. */
export async function openFiles(pid: number): Promise<number> {
  return (await fdListing(pid)).length;
}

/**
 * The descriptors a process holds on `path`. Deno runs a file's async read
 * or stat on a worker thread with a duplicate of its descriptor, so a file
 * being read shows twice for that moment: a follower's own descriptor is
 * the one seen in every look.
 */
export async function fdsOn(pid: number, path: string): Promise<string[]> {
  return (await fdListing(pid)).filter((line) => line.endsWith(` -> ${path}`))
    .map((line) => line.split(" -> ")[0]!.split(" ").at(-1)!);
}

/** A response read off a raw connection. */
export interface RawResponse {
  /** The status code (0 when the server closed without answering). */
  status: number;
  /** Header names in lower case; repeated ones joined with `, `. */
  headers: Map<string, string>;
  /** The body, de-chunked. */
  body: string;
}

const decoder = new TextDecoder();

function dechunk(bytes: Uint8Array): Uint8Array {
  const out: number[] = [];
  let at = 0;
  for (;;) {
    const end = bytes.indexOf(0x0a, at);
    if (end < 0) break;
    const size = parseInt(decoder.decode(bytes.subarray(at, end)), 16);
    if (!(size > 0)) break;
    out.push(...bytes.subarray(end + 1, end + 1 + size));
    at = end + 1 + size + 2;
  }
  return new Uint8Array(out);
}

/** Parses one response from the bytes a connection gave until it closed. */
export function parseResponse(bytes: Uint8Array): RawResponse {
  const split = bytes.findIndex((_, i) =>
    bytes[i] === 0x0d && bytes[i + 1] === 0x0a && bytes[i + 2] === 0x0d &&
    bytes[i + 3] === 0x0a
  );
  if (split < 0) return { status: 0, headers: new Map(), body: "" };
  const [statusLine, ...fields] = decoder.decode(bytes.subarray(0, split))
    .split("\r\n");
  const headers = new Map<string, string>();
  for (const field of fields) {
    const colon = field.indexOf(":");
    const name = field.slice(0, colon).trim().toLowerCase();
    const value = field.slice(colon + 1).trim();
    headers.set(
      name,
      headers.has(name) ? `${headers.get(name)}, ${value}` : value,
    );
  }
  let body = bytes.subarray(split + 4);
  if (headers.get("transfer-encoding") === "chunked") body = dechunk(body);
  return {
    status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0),
    headers,
    body: decoder.decode(body),
  };
}

/** Reads a connection until the server closes it (or `timeoutMs` passes). */
export async function readToEnd(
  conn: Deno.Conn,
  timeoutMs = 30_000,
): Promise<{ bytes: Uint8Array; closed: boolean }> {
  const chunks: Uint8Array[] = [];
  let closed = false;
  const timer = setTimeout(() => {
    try {
      conn.close();
    } catch {
      // Closed already.
    }
  }, timeoutMs);
  try {
    const buffer = new Uint8Array(64 * 1024);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) {
        closed = true;
        break;
      }
      chunks.push(buffer.slice(0, n));
    }
  } catch (error) {
    // A reset is the server closing too; our own close is the timeout.
    closed = !(error instanceof Deno.errors.BadResource ||
      error instanceof Deno.errors.Interrupted);
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // Closed already.
    }
  }
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return { bytes, closed };
}

/**
 * Sends `request` (as is) on a new connection to `hostname:port` and reads
 * the response until the server closes the connection.
 */
export async function rawRequest(
  port: number,
  request: string,
  hostname = "127.0.0.1",
): Promise<RawResponse> {
  const conn = await Deno.connect({ hostname, port });
  await conn.write(new TextEncoder().encode(request));
  return parseResponse((await readToEnd(conn)).bytes);
}

/** A GET with the given Host and headers, on a connection of its own. */
export async function rawGet(
  port: number,
  path: string,
  host: string,
  headers: Record<string, string> = {},
  hostname = "127.0.0.1",
): Promise<RawResponse> {
  const lines = [`GET ${path} HTTP/1.1`, `Host: ${host}`, "Connection: close"];
  for (const [name, value] of Object.entries(headers)) {
    lines.push(`${name}: ${value}`);
  }
  return await rawRequest(port, lines.join("\r\n") + "\r\n\r\n", hostname);
}

/** A urlencoded POST with the given Host, Origin and cookie. */
export async function rawPost(
  port: number,
  path: string,
  options: {
    host: string;
    origin?: string;
    cookie: string;
    body: string;
    hostname?: string;
  },
): Promise<RawResponse> {
  const body = new TextEncoder().encode(options.body);
  const lines = [
    `POST ${path} HTTP/1.1`,
    `Host: ${options.host}`,
    "Connection: close",
    `Cookie: ${options.cookie}`,
    "Accept: application/json",
    "Content-Type: application/x-www-form-urlencoded",
    `Content-Length: ${body.length}`,
  ];
  if (options.origin !== undefined) lines.push(`Origin: ${options.origin}`);
  return await rawRequest(
    port,
    lines.join("\r\n") + "\r\n\r\n" + options.body,
    options.hostname,
  );
}

/** Waits until the server's process is gone or `check` holds. */
export async function waitForServer<T>(
  server: ServeProcess,
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
): Promise<T> {
  return await waitFor(what, async () => {
    if (server.exited()) throw new Error(`serve exited while ${what}`);
    return await check();
  }, timeoutMs);
}

/** A live run with a burst of events behind it, and a dashboard on it. */
export interface ServedBurst extends AsyncDisposable {
  /** The packet. */
  packet: TempPacket;
  /** The run (its `--json` output read all along: a full pipe would stall it). */
  run: LiveRun;
  /** How the run ended, once it has. */
  finished: ReturnType<LiveRun["finish"]>;
  /** The snapshot that showed the second prompt past the burst. */
  snapshot: Record<string, unknown>;
  /** The dashboard, started then. */
  dashboard: ServeProcess;
}

/**
 * Runs a packet whose first prompt writes `burst` rounds at once and whose
 * second keeps the run live (`tail` rounds, `delay` ms apart), and starts
 * `serve` on it once the second prompt runs past `pastSeq`.
 */
export async function servedBurst(
  burst: number,
  tail: { rounds: number; delay: number },
  pastSeq: number,
): Promise<ServedBurst> {
  const packet = await makePacket({
    prompts: {
      "01_burst.prompt.md": longPrompt(burst, 0),
      "02_tail.prompt.md": longPrompt(tail.rounds, tail.delay),
    },
  });
  const run = startRun(packet.dir);
  const finished = run.finish();
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the second prompt",
    (s) => s.prompt_id === "02" && Number(s.last_seq) > pastSeq,
  );
  const dashboard = await serve([packet.dir]);
  return {
    packet,
    run,
    finished,
    snapshot,
    dashboard,
    async [Symbol.asyncDispose](): Promise<void> {
      await dashboard[Symbol.asyncDispose]();
      await run[Symbol.asyncDispose]();
      await packet[Symbol.asyncDispose]();
    },
  };
}
