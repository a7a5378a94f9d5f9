/**
 * A child process read line by line, for CLI adapters: the agent runs in its
 * own process group (so an interrupt or a timeout reaches every process it
 * started), its stdout is read as lines with bounded memory however long a
 * line is, the last lines of its stderr are kept for the failure message,
 * and its exit code or signal is reported. A line that is not JSON is a
 * line like any other: `parseJsonLine` never throws.
 *
 * @module
 */

import {
  type ChildLine,
  type ParsedLine,
  parseJsonLine,
  readLines,
} from "./read_lines.ts";

export type { ChildLine, ParsedLine };

/** How the child ended. */
export interface ChildExit {
  /** The exit code; with a signal, 128 + its number, as Deno reports it. */
  code: number;
  /** The signal that ended it, or `null`. */
  signal: Deno.Signal | null;
  /** The last lines of its stderr, oldest first. */
  stderr: string[];
}

/** Options for {@linkcode spawnChildLines}. */
export interface SpawnChildLinesOptions {
  /** Arguments (never through a shell). */
  args?: string[];
  /** Working directory. */
  cwd?: string;
  /** Variables added to (or, with `clearEnv`, making up) the environment. */
  env?: Record<string, string>;
  /** Start from an empty environment. */
  clearEnv?: boolean;
  /**
   * `null` (the default): the child reads end-of-file at once (a CLI with
   * its prompt on argv must not wait on stdin). `piped`: {@linkcode
   * ChildLines.write} feeds it.
   */
  stdin?: "null" | "piped";
  /** A longer stdout line is cut to this many bytes (default 8 MiB). */
  maxLineBytes?: number;
  /** How many stderr lines to keep (default 40), each cut at 4 KiB. */
  stderrLines?: number;
}

const DEFAULT_MAX_LINE_BYTES = 8 << 20;
const DEFAULT_STDERR_LINES = 40;
const STDERR_LINE_BYTES = 4096;

/**
 * A child process in its own process group, read line by line. Read
 * `lines()` (or `json()`) once, to the end; then `exit` resolves. Always
 * `close()` it.
 */
export class ChildLines {
  /** The child's pid, which is also its process group id. */
  readonly pid: number;
  /** Resolves when the child has exited and its stderr is read. */
  readonly exit: Promise<ChildExit>;
  /**
   * Resolves when the child itself has exited, even while a process it left
   * behind still holds its stdout or stderr open.
   */
  readonly status: Promise<Deno.CommandStatus>;
  readonly #child: Deno.ChildProcess;
  /** Held from the start, so that `close()` can always end a read. */
  readonly #stdout: ReadableStreamDefaultReader<Uint8Array>;
  readonly #stderrReader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #maxLineBytes: number;
  readonly #stderr: string[] = [];
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array> | null;
  #exited = false;
  /** When the child itself exited (`performance.now()`), or `null`. */
  #statusAt: number | null = null;
  #closed = false;
  #stdoutEnded = false;

  /** Use {@linkcode spawnChildLines}. */
  constructor(
    child: Deno.ChildProcess,
    options: { maxLineBytes: number; stderrLines: number; piped: boolean },
  ) {
    this.#child = child;
    this.#stdout = child.stdout.getReader();
    this.#stderrReader = child.stderr.getReader();
    this.pid = child.pid;
    this.#maxLineBytes = options.maxLineBytes;
    this.#stdin = options.piped ? child.stdin.getWriter() : null;
    this.status = child.status;
    child.status.then(() => this.#statusAt = performance.now(), () => {});
    const stderrDone = this.#keepStderr(options.stderrLines);
    this.exit = Promise.all([child.status, stderrDone]).then(([status]) => {
      this.#exited = true;
      return {
        code: status.code,
        signal: status.signal,
        stderr: [...this.#stderr],
      };
    });
  }

  /** The last lines of stderr so far, oldest first. */
  get stderr(): string[] {
    return [...this.#stderr];
  }

  /** The child's stdout, line by line, until it closes. */
  async *lines(): AsyncGenerator<ChildLine> {
    yield* readLines(chunksOf(this.#stdout), this.#maxLineBytes);
    this.#stdoutEnded = true;
  }

  /** The child's stdout lines, each parsed as JSON or kept as text. */
  async *json(): AsyncGenerator<ParsedLine> {
    for await (const line of this.lines()) yield parseJsonLine(line);
  }

  /**
   * Writes to the child's stdin (spawned with `stdin: "piped"`).
   *
   * @throws {Error} when stdin is not piped, or the child closed it.
   */
  async write(text: string): Promise<void> {
    if (this.#stdin === null) throw new Error("the child's stdin is not piped");
    await this.#stdin.write(new TextEncoder().encode(text));
  }

  /** Closes the child's stdin (it reads end-of-file). */
  async closeInput(): Promise<void> {
    await this.#stdin?.close().catch(() => {});
  }

  /**
   * Sends a signal to the child's whole process group. Never throws: a
   * group that is gone has nothing left to signal.
   */
  signal(signal: Deno.Signal = "SIGTERM"): void {
    if (this.#exited) return;
    try {
      Deno.kill(-this.pid, signal);
    } catch {
      try {
        this.#child.kill(signal);
      } catch {
        // Already gone.
      }
    }
  }

  /**
   * Ends the child: stdin closed, then SIGTERM to its group, then SIGKILL
   * after `graceMs`, then stdout dropped, and stderr once read to its end
   * or `graceMs` later: a process the child left in a session of its own
   * may hold either open, and no read outlives `close()`. A child whose
   * output was read to its end is first given `graceMs` to exit on its own
   * (its exit code is then its own, not the signal's). Idempotent.
   *
   * @returns How it ended.
   */
  async close(graceMs = 2000): Promise<ChildExit> {
    if (!this.#closed) {
      this.#closed = true;
      await this.closeInput();
      if (this.#statusAt === null && this.#stdoutEnded) {
        // Its output ended: it is exiting on its own; let it, within the grace.
        await this.#statusWithin(graceMs);
      }
      if (this.#statusAt === null) {
        this.signal("SIGTERM");
        let timer: ReturnType<typeof setTimeout> | undefined;
        const killed = new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            this.signal("SIGKILL");
            resolve();
          }, graceMs);
        });
        await Promise.race([this.#child.status, killed]);
        clearTimeout(timer);
      }
      // A stdout nobody read to the end is released (a grandchild may hold it).
      await this.#stdout.cancel().catch(() => {});
      const exit = await this.exitWithin(graceMs);
      // So is a stderr still open: its last lines are those read so far.
      await this.#stderrReader.cancel().catch(() => {});
      return exit;
    }
    return await this.exitWithin(graceMs);
  }

  /**
   * How the child ended: once its stderr is read, or `graceMs` after it
   * exited when a process it left behind keeps stderr open (the stderr
   * lines are then those read so far).
   */
  async exitWithin(graceMs: number): Promise<ChildExit> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = this.#child.status.then((status) =>
      new Promise<ChildExit>((resolve) => {
        const since = performance.now() - (this.#statusAt ?? Infinity);
        timer = setTimeout(() =>
          resolve({
            code: status.code,
            signal: status.signal,
            stderr: [...this.#stderr],
          }), Math.max(0, graceMs - Math.max(0, since)));
      })
    );
    try {
      return await Promise.race([this.exit, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #statusWithin(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#child.status,
      new Promise<void>((resolve) => timer = setTimeout(resolve, ms)),
    ]);
    clearTimeout(timer);
  }

  async #keepStderr(keep: number): Promise<void> {
    try {
      for await (
        const line of readLines(
          chunksOf(this.#stderrReader),
          STDERR_LINE_BYTES,
        )
      ) {
        if (keep === 0) continue;
        this.#stderr.push(line.truncated ? `${line.text}…` : line.text);
        if (this.#stderr.length > keep) this.#stderr.shift();
      }
    } catch {
      // The pipe broke: keep what arrived.
    }
  }
}

/** A reader's chunks until its stream ends, is cancelled or breaks. */
async function* chunksOf(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  for (;;) {
    let result: ReadableStreamReadResult<Uint8Array>;
    try {
      result = await reader.read();
    } catch {
      return; // The pipe broke: what arrived was yielded.
    }
    if (result.done) return;
    yield result.value;
  }
}

/**
 * Spawns `command` in its own process group (a new session, so the whole
 * agent and the tools it starts can be signalled at once), with stdout and
 * stderr piped.
 *
 * Requires `--allow-run` permission.
 *
 * @param command The executable.
 * @param options Arguments, working directory, environment, stdin, limits.
 * @returns The running child.
 * @throws {Deno.errors.NotFound} when the executable does not exist.
 *
 * @example Usage
 * ```ts
 * import { spawnChildLines } from "./child_lines.ts";
 * import assert from "node:assert/strict";
 *
 * const child = spawnChildLines("sh", { args: ["-c", "echo '{\"n\":1}'; echo oops"] });
 * const kinds: string[] = [];
 * for await (const line of child.json()) kinds.push(line.kind);
 * const exit = await child.close();
 * assert.deepEqual(kinds, ["json", "text"]);
 * assert.equal(exit.code, 0);
 * ```
 */
export function spawnChildLines(
  command: string,
  options: SpawnChildLinesOptions = {},
): ChildLines {
  const piped = options.stdin === "piped";
  const child = new Deno.Command(command, {
    args: options.args ?? [],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.clearEnv ? { clearEnv: true } : {}),
    stdin: piped ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
    // setsid(): the child leads a new process group.
    detached: true,
  }).spawn();
  return new ChildLines(child, {
    maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    stderrLines: options.stderrLines ?? DEFAULT_STDERR_LINES,
    piped,
  });
}
