/**
 * The shared CLI-process core: one agent CLI process as a provider
 * {@linkcode Session}. The adapter's {@linkcode CliProfile} builds the argv
 * and reads the lines; this file spawns, reads, signals and decides what an
 * exit means, the same way for every CLI.
 *
 * - The process runs in its own process group, so a signal reaches the
 *   agent and every tool it started; after it exits, whatever is left of
 *   the group is killed, and so is every process that carries the CLI's
 *   own id in its environment (`PROMPT_RUNNER_AGENT_ID`): a tool it
 *   started in a session of its own, even once init adopted it.
 * - `interrupt()` sends SIGINT to the group, then SIGKILL after a grace
 *   period. Once the core signalled, neither the exit code nor the CLI's
 *   "aborted" result is a failure: the driver knows why it interrupted.
 * - On the send_input lane the core counts one terminal line per frame it
 *   wrote; only the last expected one ends the stream, and the failure or
 *   completion events of the turns a steer preempted are dropped.
 * - A line that is not JSON is kept in the transcript; a parser that throws
 *   loses that line only, never the run.
 *
 * @module
 */

import type { CliProfile } from "./cli_profile.ts";
import { failureEvents } from "./failure_events.ts";
import { type ChildLines, spawnChildLines } from "./child_lines.ts";
import type { AgentProcessRef, Session, SessionMeta } from "./provider.ts";
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
import { CARRY_ON } from "../shared/carry_on.ts";

/** How long a CLI has to exit after SIGINT before the group is killed. */
export const INTERRUPT_GRACE_MS = 3000;

/**
 * How long the CLI's output may stay open after the CLI exited (a process it
 * left behind holds the pipe) before the runner kills its group and, a
 * moment later, stops reading.
 */
const LEADER_EXIT_GRACE_MS = 1000;

/** The longest text line of a CLI's output kept in the transcript. */
const NOTE_CHARS = 2000;

const ENDING_TYPES = new Set(["run_completed", "run_failed", "error_occurred"]);

/** What a CLI session is started with. */
export interface CliSessionInit {
  /** The adapter's profile. */
  profile: CliProfile;
  /** The executable. */
  bin: string;
  /** Its arguments. */
  args: string[];
  /** Its whole environment. */
  env: Record<string, string>;
  /** Its working directory. */
  cwd: string;
  /** Frames to write to stdin at once (the send_input lane), else `null`. */
  input: string[] | null;
  /** The session's handles; `session_id` is filled in once the CLI says it. */
  meta: SessionMeta;
  /** The CLI's version, for `run_started`. */
  version: string | null;
  /** Writes a line to the attempt's transcript. */
  note: (text: string) => void;
  /** Aborted when the run is interrupted. */
  signal: AbortSignal;
  /** SIGINT-to-SIGKILL grace (default {@linkcode INTERRUPT_GRACE_MS}). */
  graceMs?: number;
}

/** One running CLI process as a provider session. */
export class CliSession implements Session {
  /** @inheritdoc */
  readonly meta: SessionMeta;
  /** @inheritdoc */
  readonly acceptsInputAfterStart: boolean;
  /** @inheritdoc */
  readonly events: AsyncIterable<ProviderEvent>;
  readonly #init: CliSessionInit;
  readonly #child: ChildLines;
  #interrupted = false;
  #expected = 1;
  #seen = 0;
  #inputClosed = false;
  #killTimer: ReturnType<typeof setTimeout> | undefined;
  /** The CLI's descendants when it was interrupted (any session). */
  #tree: Promise<ProcessEntry[]> = Promise.resolve([]);
  #outputEnded = false;
  /** Resolves when the CLI exited but something it left holds its output. */
  readonly #abandoned: Promise<"abandoned">;
  /** `PROMPT_RUNNER_AGENT_ID=…`, as the CLI and what it starts inherit it. */
  readonly #idEntry: string;
  /** @inheritdoc */
  readonly agentProcess: Promise<AgentProcessRef>;

  /**
   * Spawns the CLI.
   *
   * @throws {Deno.errors.NotFound} when the executable does not exist.
   */
  constructor(init: CliSessionInit) {
    this.#init = init;
    this.meta = init.meta;
    this.acceptsInputAfterStart = init.input !== null;
    const id = crypto.randomUUID();
    this.#idEntry = `${AGENT_ID_VARIABLE}=${id}`;
    this.#child = spawnChildLines(init.bin, {
      args: init.args,
      cwd: init.cwd,
      env: { ...init.env, [AGENT_ID_VARIABLE]: id },
      clearEnv: true,
      stdin: init.input === null ? "null" : "piped",
    });
    const pid = this.#child.pid;
    this.agentProcess = processStartTime(pid).catch(() => null).then((
      start,
    ) => ({ pid, pid_start: start, env: this.#idEntry }));
    this.#abandoned = this.#watchLeader();
    this.events = this.#run();
    init.signal.addEventListener("abort", () => this.interrupt(), {
      once: true,
    });
  }

  /**
   * Once the CLI itself exits: kills what an interrupt left running, and if
   * its output is still held open after a grace period, kills its group and
   * then gives up reading.
   */
  async #watchLeader(): Promise<"abandoned"> {
    await this.#child.status;
    if (this.#interrupted) {
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
      `[prompt_runner] the ${this.meta.provider} CLI exited but a process it left holds its output open: stopped reading it`,
    );
    return "abandoned";
  }

  /** The CLI's pid (also its process group id). */
  get pid(): number {
    return this.#child.pid;
  }

  /** @inheritdoc */
  interrupt(): void {
    if (this.#interrupted) return;
    this.#interrupted = true;
    this.#init.note(`[prompt_runner] SIGINT to the ${this.meta.provider} CLI`);
    // The tree is read first: a tool in a session of its own is out of the
    // group's reach, and once the CLI exits it is no longer its descendant.
    this.#tree = descendantsOf(this.#child.pid).catch(() => []);
    this.#tree.then(() => this.#child.signal("SIGINT"));
    this.#killTimer = setTimeout(() => {
      this.#init.note(
        `[prompt_runner] the ${this.meta.provider} CLI was still running ${
          this.#init.graceMs ?? INTERRUPT_GRACE_MS
        } ms after SIGINT: SIGKILL to its process group`,
      );
      this.#child.signal("SIGKILL");
    }, this.#init.graceMs ?? INTERRUPT_GRACE_MS);
  }

  /** @inheritdoc */
  async send(text: string): Promise<void> {
    const input = this.#init.profile.input;
    if (!this.acceptsInputAfterStart || input === undefined) {
      throw new Error(`the ${this.meta.provider} session takes no live input`);
    }
    if (
      this.#inputClosed || this.#interrupted || this.#seen >= this.#expected
    ) {
      throw new Error("the turn is over");
    }
    this.#expected++;
    try {
      await this.#write(input.steer(text + CARRY_ON));
    } catch (error) {
      this.#expected--;
      throw error;
    }
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    clearTimeout(this.#killTimer);
    await this.#child.close(this.#init.graceMs ?? INTERRUPT_GRACE_MS);
    this.#sweepGroup();
    await this.#killOrphans();
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
        `[prompt_runner] killed ${killed.length} process(es) the ${this.meta.provider} CLI left running: ${
          killed.map((entry) => describeProcess(entry)).join(", ")
        }`,
      );
    }
  }

  async #write(frames: string[]): Promise<void> {
    for (const frame of frames) await this.#child.write(`${frame}\n`);
  }

  async #closeInput(): Promise<void> {
    if (this.#inputClosed) return;
    this.#inputClosed = true;
    await this.#child.closeInput();
  }

  /** Kills what is left of the process group once its leader is gone. */
  #sweepGroup(): void {
    try {
      Deno.kill(-this.#child.pid, "SIGKILL");
    } catch {
      // Nothing left in the group.
    }
  }

  #started(pidStart: string | null): ProviderEvent {
    const id = this.meta.session_id;
    return {
      type: "run_started",
      data: {
        provider: this.meta.provider,
        model: this.meta.model,
        session_id: id || null,
        provider_session_id: id || null,
        cli_version: this.#init.version,
        pid: this.#child.pid,
        pid_start: pidStart,
      },
    };
  }

  async *#run(): AsyncGenerator<ProviderEvent> {
    const { profile, note } = this.#init;
    const name = profile.name;
    const parser = profile.parser();
    let started = false;
    let sawTerminal = false;
    let fatal = false;
    const { pid_start } = await this.agentProcess;
    if (this.#init.input !== null) {
      await this.#write(this.#init.input).catch((error) =>
        note(`[prompt_runner] cannot write to ${name}'s stdin: ${error}`)
      );
    }
    const lines = this.#child.json()[Symbol.asyncIterator]();
    for (;;) {
      const next = await Promise.race([lines.next(), this.#abandoned]);
      if (next === "abandoned" || next.done) break;
      const parsed = next.value;
      const text = parsed.line.text;
      const keep = (): void =>
        note(
          `[${name}] ${text.slice(0, NOTE_CHARS)}${
            text.length > NOTE_CHARS ? "…" : ""
          }`,
        );
      if (parsed.kind === "text" && parsed.reason !== "blank") keep();
      let result;
      try {
        result = parser.line(
          text,
          parsed.kind === "json" ? parsed.value : undefined,
        );
      } catch (error) {
        note(`[prompt_runner] unreadable ${name} line: ${error}`);
        continue;
      }
      if (
        parsed.kind === "json" && result.events.length === 0 &&
        !result.terminal && !result.fatal
      ) {
        // No canonical event says what it was (an unknown type, a warning):
        // the transcript keeps it as the CLI wrote it.
        keep();
      }
      if (typeof result.session_id === "string" && !this.meta.session_id) {
        this.meta.session_id = result.session_id;
      }
      if (typeof result.model === "string" && result.model) {
        this.meta.model = result.model;
      }
      if (
        !started &&
        (this.meta.session_id || result.events.length > 0 ||
          result.terminal || result.fatal)
      ) {
        started = true;
        yield this.#started(pid_start);
      }
      let last = true;
      if (result.terminal) {
        this.#seen++;
        sawTerminal = true;
        last = this.#seen >= this.#expected;
      }
      const keepEnding = !this.#interrupted && last;
      for (const event of result.events) {
        if (keepEnding || !ENDING_TYPES.has(event.type)) yield event;
      }
      if (result.fatal && !this.#interrupted) {
        fatal = true;
        yield* failureEvents(name, result.fatal);
        note(`[prompt_runner] ${name}: ${result.fatal.message}; killing it`);
        this.#child.signal("SIGKILL");
        break;
      }
      if (result.terminal && this.#seen >= this.#expected) {
        await this.#closeInput();
      }
    }
    this.#outputEnded = true;
    const exit = await this.#child.exitWithin(LEADER_EXIT_GRACE_MS);
    clearTimeout(this.#killTimer);
    this.#sweepGroup();
    await this.#killOrphans();
    note(
      `[prompt_runner] ${name} exited: ${
        exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`
      }${this.#interrupted ? " (after our signal)" : ""}`,
    );
    if (fatal || this.#interrupted) return;
    const failure = parser.exit({
      code: exit.signal ? null : exit.code,
      signal: exit.signal,
      stderr: exit.stderr,
      interrupted: false,
      sawTerminal,
    }) ?? (sawTerminal && this.#seen >= this.#expected ? null : {
      kind: "transport_disconnect",
      message: `${name} exited (${
        exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`
      }) without finishing its turn${
        exit.stderr.length
          ? `; stderr: ${exit.stderr.slice(-5).join(" | ")}`
          : ""
      }`,
    });
    if (failure === null) return;
    if (!started) yield this.#started(pid_start);
    yield* failureEvents(name, failure);
  }
}
