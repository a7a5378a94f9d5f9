/**
 * Running a child process with a deadline, capturing its output without ever
 * hanging on a pipe that a grandchild keeps open.
 *
 * @module
 */

import { errorText } from "./errors.ts";

/** What a finished (or abandoned) process left behind. */
export interface ProcessResult {
  /** How it ended: `exited`, `timeout`, or `not_found` when it never started. */
  state: "exited" | "timeout" | "not_found" | "spawn_failed";
  /** The exit code, when it exited. */
  code: number | null;
  /** Standard output, decoded (capped). */
  stdout: string;
  /** Standard error, decoded (capped). */
  stderr: string;
  /** Why it could not start, for `not_found` and `spawn_failed`. */
  error?: string;
}

/** Options for {@linkcode runProcess}. */
export interface RunProcessOptions {
  /** Arguments. */
  args?: string[];
  /** Working directory. */
  cwd?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Deadline in milliseconds; the process is killed when it passes. */
  timeoutMs?: number;
  /** Output beyond this many bytes per stream is dropped. */
  maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 1 << 20;

/**
 * Reads up to `maxBytes` of a stream, and stops reading `graceMs` after
 * `until` settles: a grandchild that inherited the pipe may hold it open long
 * after the process it belongs to is gone. Never throws; what arrived before
 * the stop is kept.
 */
export async function readCapped(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  until: Promise<unknown>,
  graceMs = 500,
): Promise<string> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let finished = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const giveUp = (): void => {
    if (finished) return;
    timer = setTimeout(() => reader.cancel().catch(() => {}), graceMs);
  };
  until.then(giveUp, giveUp);
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      if (size < maxBytes) chunks.push(value.subarray(0, maxBytes - size));
      size = Math.min(maxBytes, size + value.length);
    }
  } catch {
    // Cancelled after the grace: keep what arrived.
  } finally {
    finished = true;
    clearTimeout(timer);
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * Runs `exec` with arguments (never through a shell), killing it when the
 * deadline passes.
 *
 * Requires `--allow-run` permission.
 */
export async function runProcess(
  exec: string,
  options: RunProcessOptions = {},
): Promise<ProcessResult> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(exec, {
      args: options.args ?? [],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    const notFound = error instanceof Deno.errors.NotFound;
    return {
      state: notFound ? "not_found" : "spawn_failed",
      code: null,
      stdout: "",
      stderr: "",
      error: errorText(error),
    };
  }
  let timedOut = false;
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, options.timeoutMs);
  const status = child.status;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const [result, stdout, stderr] = await Promise.all([
    status,
    readCapped(child.stdout, maxBytes, status),
    readCapped(child.stderr, maxBytes, status),
  ]);
  clearTimeout(timer);
  return {
    state: timedOut ? "timeout" : "exited",
    code: timedOut ? null : result.code,
    stdout,
    stderr,
  };
}
