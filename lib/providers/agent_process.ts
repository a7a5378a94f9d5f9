/**
 * One agent CLI process and everything it may leave behind, for the
 * sessions that run one (`cli_session.ts` for the one-shot CLIs,
 * `rpc_session.ts` for the JSON-RPC live lanes).
 *
 * - The process runs in its own process group, so a signal reaches the
 *   agent and every tool it started; after it exits, whatever is left of
 *   the group is killed, and so is every process that carries the CLI's
 *   own id in its environment (`PROMPT_RUNNER_AGENT_ID`): a tool it
 *   started in a session of its own, even once init adopted it.
 * - `interrupt()` sends SIGINT to the group, then SIGKILL after a grace
 *   period.
 * - When the CLI exits but something it left holds its output open, the
 *   group is killed, and a moment later the reader gives up
 *   (`abandoned`).
 *
 * @module
 */

import {
  type ChildExit,
  type ChildLines,
  type ParsedLine,
  spawnChildLines,
} from "./child_lines.ts";
import type { AgentProcessRef, SessionMeta } from "./provider.ts";
import type { CliFailure } from "./cli_profile.ts";
import type { ProviderEvent } from "../shared/events.ts";
import {
  AGENT_ID_VARIABLE,
  agentLeftovers,
  descendantsOf,
  describeProcess,
  killSurvivors,
  type ProcessEntry,
} from "../shared/process_tree.ts";
import { processStartTime } from "../shared/run_lock.ts";

/** How long a CLI has to exit after SIGINT before the group is killed. */
export const INTERRUPT_GRACE_MS = 3000;

/**
 * How long the CLI's output may stay open after the CLI exited (a process it
 * left behind holds the pipe) before the runner kills its group and, a
 * moment later, stops reading.
 */
export const LEADER_EXIT_GRACE_MS = 1000;

/** A line of a Rust backtrace: it names nothing a reader can act on. */
const BACKTRACE_LINE =
  /^\s*(stack backtrace:?|\d+: <unknown>|at <unknown>)\s*$/i;

/**
 * The last lines of a CLI's stderr worth quoting in a failure: a Rust
 * backtrace (codex prints one after its error) is left out, so the error
 * itself is what the message quotes.
 *
 * @example Usage
 * ```ts
 * import { stderrTail } from "./agent_process.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(
 *   stderrTail(["Error: no", "", "Stack backtrace:", "   0: <unknown>"]),
 *   "Error: no",
 * );
 * ```
 */
export function stderrTail(lines: string[], count = 5): string {
  return lines.filter((line) =>
    line.trim() !== "" && !BACKTRACE_LINE.test(line)
  )
    .slice(-count).join(" | ");
}

/**
 * The `run_started` event of an agent process's session: the provider,
 * model and session id as known now, the CLI's version, and the process.
 */
export function startedEvent(
  meta: SessionMeta,
  version: string | null,
  pid: number,
  pidStart: string | null,
): ProviderEvent {
  const id = meta.session_id;
  return {
    type: "run_started",
    data: {
      provider: meta.provider,
      model: meta.model,
      session_id: id || null,
      provider_session_id: id || null,
      cli_version: version,
      pid,
      pid_start: pidStart,
    },
  };
}

/** The failure of a CLI that exited without finishing its turn. */
export function disconnected(name: string, exit: ChildExit): CliFailure {
  return {
    kind: "transport_disconnect",
    message: `${name} exited (${
      exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`
    }) without finishing its turn${
      exit.stderr.length ? `; stderr: ${stderrTail(exit.stderr)}` : ""
    }`,
  };
}

/** What an agent process is started with. */
export interface AgentProcessInit {
  /** The provider's name, for transcript lines. */
  name: string;
  /** The executable. */
  bin: string;
  /** Its arguments. */
  args: string[];
  /** Its whole environment. */
  env: Record<string, string>;
  /** Its working directory. */
  cwd: string;
  /** Whether its stdin is a pipe the session writes to. */
  stdin: boolean;
  /** Writes a line to the attempt's transcript. */
  note: (text: string) => void;
  /** SIGINT-to-SIGKILL grace (default {@linkcode INTERRUPT_GRACE_MS}). */
  graceMs?: number;
}

/** A running agent CLI in its own process group. */
export class AgentProcess {
  /** The process (and its group's) id, with its start time and id entry. */
  readonly ref: Promise<AgentProcessRef>;
  /** Resolves when the CLI exited but something it left holds its output. */
  readonly abandoned: Promise<"abandoned">;
  readonly #init: AgentProcessInit;
  readonly #child: ChildLines;
  /** `PROMPT_RUNNER_AGENT_ID=…`, as the CLI and what it starts inherit it. */
  readonly #idEntry: string;
  #signalled = false;
  #killTimer: ReturnType<typeof setTimeout> | undefined;
  /** The CLI's descendants when it was signalled. */
  #tree: Promise<ProcessEntry[]> = Promise.resolve([]);
  #outputEnded = false;
  #inputClosed = false;

  /**
   * Spawns the CLI.
   *
   * @throws {Deno.errors.NotFound} when the executable does not exist.
   */
  constructor(init: AgentProcessInit) {
    this.#init = init;
    const id = crypto.randomUUID();
    this.#idEntry = `${AGENT_ID_VARIABLE}=${id}`;
    this.#child = spawnChildLines(init.bin, {
      args: init.args,
      cwd: init.cwd,
      env: { ...init.env, [AGENT_ID_VARIABLE]: id },
      clearEnv: true,
      stdin: init.stdin ? "piped" : "null",
    });
    const pid = this.#child.pid;
    this.ref = processStartTime(pid).catch(() => null).then((start) => ({
      pid,
      pid_start: start,
      env: this.#idEntry,
    }));
    this.abandoned = this.#watchLeader();
  }

  /** The CLI's pid (also its process group id). */
  get pid(): number {
    return this.#child.pid;
  }

  /** Whether the runner signalled it (an interrupt, a timeout). */
  get signalled(): boolean {
    return this.#signalled;
  }

  /** Its stdout, line by line, parsed as JSON where it is JSON. */
  lines(): AsyncGenerator<ParsedLine> {
    return this.#child.json();
  }

  /** Writes to its stdin. */
  async write(text: string): Promise<void> {
    await this.#child.write(text);
  }

  /** Closes its stdin (once). */
  async closeInput(): Promise<void> {
    if (this.#inputClosed) return;
    this.#inputClosed = true;
    await this.#child.closeInput();
  }

  /** Whether its stdin was closed. */
  get inputClosed(): boolean {
    return this.#inputClosed;
  }

  /** Kills the group at once (a CLI that cannot go on). */
  kill(): void {
    this.#child.signal("SIGKILL");
  }

  /**
   * SIGINT to the group, then SIGKILL after the grace period. Idempotent;
   * returns whether this call sent it.
   */
  interrupt(why: string): boolean {
    if (this.#signalled) return false;
    this.#signalled = true;
    const grace = this.#init.graceMs ?? INTERRUPT_GRACE_MS;
    this.#init.note(
      `[prompt_runner] SIGINT to the ${this.#init.name} CLI${why}`,
    );
    // The tree is read first: a tool in a session of its own is out of the
    // group's reach, and once the CLI exits it is no longer its descendant.
    this.#tree = descendantsOf(this.#child.pid).catch(() => []);
    this.#tree.then(() => this.#child.signal("SIGINT"));
    this.#killTimer = setTimeout(() => {
      this.#init.note(
        `[prompt_runner] the ${this.#init.name} CLI was still running ${grace} ms after SIGINT: SIGKILL to its process group`,
      );
      this.#child.signal("SIGKILL");
    }, grace);
    return true;
  }

  /**
   * The reader is done with its output: waits briefly for the exit, then
   * kills what is left of the group and what carries the CLI's id.
   */
  async finish(): Promise<ChildExit> {
    this.#outputEnded = true;
    const exit = await this.#child.exitWithin(LEADER_EXIT_GRACE_MS);
    clearTimeout(this.#killTimer);
    this.#sweepGroup();
    await this.#killOrphans();
    return exit;
  }

  /** Ends the process (politely, then killed) and everything it left. */
  async close(): Promise<void> {
    // Its output is no longer read: nothing holds it open on our account.
    this.#outputEnded = true;
    clearTimeout(this.#killTimer);
    await this.#child.close(this.#init.graceMs ?? INTERRUPT_GRACE_MS);
    this.#sweepGroup();
    await this.#killOrphans();
  }

  async #watchLeader(): Promise<"abandoned"> {
    await this.#child.status;
    if (this.#signalled) {
      this.#sweepGroup();
      await this.#killOrphans();
    }
    const pause = (ms: number): Promise<void> =>
      new Promise((resolve) => setTimeout(resolve, ms));
    await pause(LEADER_EXIT_GRACE_MS);
    if (this.#outputEnded) return new Promise<never>(() => {});
    this.#sweepGroup();
    await this.#killOrphans();
    await pause(LEADER_EXIT_GRACE_MS);
    if (this.#outputEnded) return new Promise<never>(() => {});
    this.#init.note(
      `[prompt_runner] the ${this.#init.name} CLI exited but a process it left holds its output open: stopped reading it`,
    );
    return "abandoned";
  }

  /**
   * Kills what the CLI left running outside its group: the tools an
   * interrupt found, and whatever carries the CLI's id.
   */
  async #killOrphans(): Promise<void> {
    const tree = await this.#tree;
    this.#tree = Promise.resolve([]);
    const left = await agentLeftovers(this.#idEntry).catch(() => []);
    const killed = await killSurvivors([...tree, ...left]);
    if (killed.length > 0) {
      this.#init.note(
        `[prompt_runner] killed ${killed.length} process(es) the ${this.#init.name} CLI left running: ${
          killed.map((entry) => describeProcess(entry)).join(", ")
        }`,
      );
    }
  }

  /** Kills what is left of the process group once its leader is gone. */
  #sweepGroup(): void {
    try {
      Deno.kill(-this.#child.pid, "SIGKILL");
    } catch {
      // Nothing left in the group.
    }
  }
}
