/**
 * The shared CLI-process core: one agent CLI process as a provider
 * {@linkcode Session}. The adapter's {@linkcode CliProfile} builds the argv
 * and reads the lines; this file spawns, reads, signals and decides what an
 * exit means, the same way for every CLI.
 *
 * - The process (`agent_process.ts`) runs in its own process group; what it
 *   leaves behind is killed.
 * - `interrupt()` sends SIGINT to the group, then SIGKILL after a grace
 *   period. Once the core signalled, neither the exit code nor the CLI's
 *   "aborted" result is a failure: the driver knows why it interrupted.
 * - On the send_input lane the core counts one terminal line per frame it
 *   wrote; only the last expected one ends the stream, and the failure or
 *   completion events of the turns a steer preempted are dropped. A steer
 *   is acknowledged when the CLI echoes its frame; one still waiting for
 *   its echo when the stream ends is refused.
 * - A line that is not JSON is kept in the transcript; a parser that throws
 *   loses that line only, never the run.
 *
 * @module
 */

import type { CliProfile } from "./cli_profile.ts";
import { failureEvents } from "./failure_events.ts";
import { AgentProcess, disconnected, startedEvent } from "./agent_process.ts";
import {
  Acknowledger,
  type AgentProcessRef,
  type Session,
  type SessionMeta,
  type SteerReceipt,
  TurnOverError,
} from "./provider.ts";
import type { ProviderEvent } from "../shared/events.ts";
import { CARRY_ON } from "../shared/carry_on.ts";

export { INTERRUPT_GRACE_MS } from "./agent_process.ts";

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

/** A one-line transcript copy of a CLI's output line. */
export function noteLine(name: string, text: string): string {
  return `[${name}] ${text.slice(0, NOTE_CHARS)}${
    text.length > NOTE_CHARS ? "…" : ""
  }`;
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
  readonly #process: AgentProcess;
  #expected = 1;
  #seen = 0;
  /** Steers written and not yet echoed, by the id their echo carries. */
  readonly #unechoed = new Map<string, Acknowledger>();
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
    this.#process = new AgentProcess({
      name: init.profile.name,
      bin: init.bin,
      args: init.args,
      env: init.env,
      cwd: init.cwd,
      stdin: init.input !== null,
      note: init.note,
      ...(init.graceMs === undefined ? {} : { graceMs: init.graceMs }),
    });
    this.agentProcess = this.#process.ref;
    this.events = this.#run();
    init.signal.addEventListener("abort", () => this.interrupt(), {
      once: true,
    });
  }

  /** The CLI's pid (also its process group id). */
  get pid(): number {
    return this.#process.pid;
  }

  /** @inheritdoc */
  interrupt(): void {
    this.#process.interrupt("");
  }

  /** @inheritdoc */
  async send(text: string): Promise<SteerReceipt> {
    const input = this.#init.profile.input;
    if (!this.acceptsInputAfterStart || input === undefined) {
      throw new Error(`the ${this.meta.provider} session takes no live input`);
    }
    if (
      this.#process.inputClosed || this.#process.signalled ||
      this.#seen >= this.#expected
    ) {
      throw new TurnOverError();
    }
    this.#expected++;
    const { frames, echo } = input.steer(text + CARRY_ON);
    const ack = new Acknowledger();
    this.#unechoed.set(echo, ack);
    try {
      await this.#write(frames);
    } catch (error) {
      this.#expected--;
      this.#unechoed.delete(echo);
      throw error;
    }
    return ack.delivery;
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    this.#refuseUnechoed("the session was closed before the CLI took it");
    await this.#process.close();
  }

  #refuseUnechoed(reason: string): void {
    for (const ack of this.#unechoed.values()) ack.refuse(reason);
    this.#unechoed.clear();
  }

  async #write(frames: string[]): Promise<void> {
    for (const frame of frames) await this.#process.write(`${frame}\n`);
  }

  #started(pidStart: string | null): ProviderEvent {
    return startedEvent(
      this.meta,
      this.#init.version,
      this.#process.pid,
      pidStart,
    );
  }

  async *#run(): AsyncGenerator<ProviderEvent> {
    try {
      yield* this.#read();
    } finally {
      this.#refuseUnechoed(
        "the turn ended before the CLI took it (no echo of the steer came back)",
      );
    }
  }

  async *#read(): AsyncGenerator<ProviderEvent> {
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
    const lines = this.#process.lines()[Symbol.asyncIterator]();
    for (;;) {
      const next = await Promise.race([lines.next(), this.#process.abandoned]);
      if (next === "abandoned" || next.done) break;
      const parsed = next.value;
      const text = parsed.line.text;
      const keep = (): void => note(noteLine(name, text));
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
        !result.terminal && !result.fatal && result.echoed === undefined
      ) {
        // No canonical event says what it was (an unknown type, a warning):
        // the transcript keeps it as the CLI wrote it.
        keep();
      }
      if (result.echoed !== undefined) {
        this.#unechoed.get(result.echoed)?.acknowledge("stdin_echo");
        this.#unechoed.delete(result.echoed);
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
      const keepEnding = !this.#process.signalled && last;
      for (const event of result.events) {
        if (keepEnding || !ENDING_TYPES.has(event.type)) yield event;
      }
      if (result.fatal && !this.#process.signalled) {
        fatal = true;
        yield* failureEvents(name, result.fatal);
        note(`[prompt_runner] ${name}: ${result.fatal.message}; killing it`);
        this.#process.kill();
        break;
      }
      if (result.terminal && this.#seen >= this.#expected) {
        await this.#process.closeInput();
      }
    }
    const exit = await this.#process.finish();
    const interrupted = this.#process.signalled;
    note(
      `[prompt_runner] ${name} exited: ${
        exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`
      }${interrupted ? " (after our signal)" : ""}`,
    );
    if (fatal || interrupted) return;
    const failure = parser.exit({
      code: exit.signal ? null : exit.code,
      signal: exit.signal,
      stderr: exit.stderr,
      interrupted: false,
      sawTerminal,
    }) ?? (sawTerminal && this.#seen >= this.#expected
      ? null
      : disconnected(name, exit));
    if (failure === null) return;
    if (!started) yield this.#started(pid_start);
    yield* failureEvents(name, failure);
  }
}
