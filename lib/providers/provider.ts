/**
 * The provider interface: what the runner's session driver needs from an
 * agent adapter (Claude Code, Codex, Gemini, Amp, the simulated provider).
 *
 * An adapter implements two things. A {@linkcode Provider} starts a
 * {@linkcode Session} for a prompt in a working directory, and resumes a
 * session's thread (after a steer on the interrupt lane, or a resumeable
 * failure). A {@linkcode Session} is one turn of the agent: an async stream
 * of canonical events, a steer lane (`acceptsInputAfterStart`: `send()` on
 * the live session, or interrupt-and-resume), `interrupt()` and `close()`.
 * CLI adapters read their child's stdout with `spawnChildLines`
 * (`child_lines.ts`).
 *
 * The driver's contract, in the order it uses a session:
 * 1. `start()` once per attempt; a throw is a `start_failed` failure.
 * 2. It reads `events` to the end. The stream ends when the turn ends: after
 *    `run_completed` or `run_failed`, after `interrupt()`, or when the
 *    request's `signal` aborts. A stream that throws is a provider failure.
 * 3. Between events it may deliver a steer: `send(text)` when
 *    `acceptsInputAfterStart`, else `interrupt()`, then, once the stream has
 *    ended, `resume(meta, {cause: "steer"})` on the same thread.
 * 4. It always calls `close()`, once the stream ended or was abandoned.
 *
 * @example A provider whose agent answers every prompt at once
 * ```ts
 * import type {
 *   Provider,
 *   Session,
 *   SessionRequest,
 * } from "./provider.ts";
 * import { DEFAULT_AGENT_OPTIONS } from "../packet/agent_options.ts";
 * import assert from "node:assert/strict";
 *
 * function echoSession(request: SessionRequest): Session {
 *   const meta = { provider: "echo", session_id: "e1", model: "echo" };
 *   return {
 *     meta,
 *     acceptsInputAfterStart: false,
 *     events: (async function* () {
 *       yield { type: "run_started", data: { provider_session_id: "e1" } };
 *       yield {
 *         type: "message_received",
 *         data: { role: "assistant", content: request.text },
 *       };
 *       yield { type: "run_completed", data: { stop_reason: "end_turn" } };
 *     })(),
 *     interrupt: () => {},
 *     send: () => Promise.reject(new Error("no live input")),
 *     close: () => Promise.resolve(),
 *   };
 * }
 *
 * const echo: Provider = {
 *   name: "echo",
 *   defaultModel: "echo",
 *   start: (request) => Promise.resolve(echoSession(request)),
 *   resume: (_meta, request) => Promise.resolve(echoSession(request)),
 * };
 *
 * const session = await echo.start({
 *   prompt_id: "01", attempt: 1, ordinal: 1, mode: "run", text: "hi",
 *   cwd: ".", repos: {}, model: null, agent: DEFAULT_AGENT_OPTIONS,
 *   max_steers: 3, tmpdir: null,
 *   signal: new AbortController().signal,
 * });
 * const types: string[] = [];
 * for await (const event of session.events) types.push(event.type);
 * await session.close();
 * assert.deepEqual(types, ["run_started", "message_received", "run_completed"]);
 * ```
 *
 * @module
 */

import type { AgentOptions } from "../packet/agent_options.ts";
import type { AttemptMode, ProviderEvent } from "../shared/events.ts";
import type { AgentProcessRef } from "../shared/process_tree.ts";

export type { AgentProcessRef, AttemptMode };

/** What a provider needs to start a session. */
export interface SessionRequest {
  /** The prompt being run. */
  prompt_id: string;
  /** The attempt number within this run (1 for the first). */
  attempt: number;
  /**
   * The attempt's place among the attempts this process made of the prompt
   * (1 for the first). It differs from `attempt` in a resumed run, whose
   * numbering continues while its agent starts afresh.
   */
  ordinal: number;
  /** The attempt's mode. */
  mode: AttemptMode;
  /** The text sent to the agent. */
  text: string;
  /** The agent's working directory. */
  cwd: string;
  /** The packet's repos by name. */
  repos: Record<string, string>;
  /** The model, or `null` for the provider's default. */
  model: string | null;
  /** The prompt's provider options (`agent:` in the packet). */
  agent: AgentOptions;
  /** The prompt's steer budget: a CLI with a live-input lane opens it when above 0. */
  max_steers: number;
  /** A private directory for the agent's temporary files, or `null`. */
  tmpdir: string | null;
  /**
   * What is left of the money budget in force (US dollars): a CLI with its
   * own ceiling gets it too (Claude's `--max-budget-usd`). Absent: none.
   */
  max_budget_usd?: number;
  /**
   * Adds a line to the attempt's transcript (the argv, the CLI's version,
   * a line of its output that is not an event); never throws.
   */
  note?: (text: string) => void;
  /** Aborted when the run is interrupted. */
  signal: AbortSignal;
}

/** Why a session is resumed. */
export type ResumeCause = "steer" | "failure";

/** What a provider needs to resume a session on the same thread. */
export interface ResumeRequest extends SessionRequest {
  /** A steer, or a failure-resume after a resumeable error. */
  cause: ResumeCause;
  /** For a steer, the operator's words alone (`text` adds the carry-on instruction). */
  steer?: string;
}

/** The handles a provider needs to resume a session. */
export interface SessionMeta {
  /** The provider's name. */
  provider: string;
  /** The provider's own session (thread) id. */
  session_id: string;
  /** The model in use. */
  model: string;
  /** Provider-specific details. */
  [key: string]: unknown;
}

/** How a steer reaches a live session. */
export type SteerLane = "send_input" | "interrupt_and_resume";

/** The agent's acknowledgement of a steer: its proof of delivery. */
export interface SteerAck {
  /**
   * What delivered it: `stdin_echo` (Claude echoed the stdin frame),
   * `turn_steer` or `turn_start` (Codex's `userMessage` item echoed it),
   * `acp_prompt` (an ACP agent took the steer's prompt), `resume` (a resumed
   * CLI took it), `simulated` (the simulated provider).
   */
  mechanism: string;
  /** When the acknowledgement came (ISO 8601). */
  at: string;
}

/**
 * A session's turn is over: a steer sent now waits for the prompt's next
 * session (a retry or repair attempt), and is refused if the prompt ends
 * first.
 */
export class TurnOverError extends Error {
  constructor(message = "the turn is over") {
    super(message);
    this.name = "TurnOverError";
  }
}

/** A steer written to a live session, waiting for the agent to take it. */
export interface SteerReceipt {
  /**
   * Resolves once the agent acknowledged the steer; rejects, with the reason
   * as the error's message, when it never will (the turn ended first, the
   * session is gone). Settles at the latest when the session's events end.
   */
  readonly acknowledged: Promise<SteerAck>;
}

/**
 * Bookkeeping for one steer a session wrote and the agent has yet to
 * acknowledge: the session calls `acknowledge` when the agent echoes or
 * accepts it, or `refuse` when it never will. The first call wins.
 *
 * @example Usage
 * ```ts
 * import { Acknowledger } from "./provider.ts";
 * import assert from "node:assert/strict";
 *
 * const ack = new Acknowledger();
 * ack.acknowledge("stdin_echo");
 * ack.refuse("too late");
 * assert.equal((await ack.delivery.acknowledged).mechanism, "stdin_echo");
 * ```
 */
export class Acknowledger {
  /** What the runner waits on. */
  readonly delivery: SteerReceipt;
  #settled = false;
  #resolve!: (ack: SteerAck) => void;
  #reject!: (error: Error) => void;

  constructor() {
    const acknowledged = new Promise<SteerAck>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Nobody may be waiting yet: an early refusal is not unhandled.
    acknowledged.catch(() => {});
    this.delivery = { acknowledged };
  }

  /** Whether it was acknowledged or refused already. */
  get settled(): boolean {
    return this.#settled;
  }

  /** The agent took the steer, by `mechanism`. */
  acknowledge(mechanism: string): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve({ mechanism, at: new Date().toISOString() });
  }

  /** The agent never will take it, because of `reason`. */
  refuse(reason: string): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(new Error(reason));
  }
}

/**
 * A live provider session: one turn of the agent (and, on the send_input
 * lane, the input written to it while it runs).
 */
export interface Session {
  /**
   * The handles needed to resume this session's thread. An adapter may add
   * to it while the session runs (a CLI reports its session id in its first
   * lines); the driver reads it only after the stream ended.
   */
  readonly meta: SessionMeta;
  /**
   * Whether text can be written to the live session (the send_input lane,
   * e.g. Claude with `--input-format stream-json`). When false, a steer
   * interrupts the turn and resumes the thread with the steer's text (the
   * interrupt_and_resume lane). A fact of the provider profile: constant
   * for the session's life.
   */
  readonly acceptsInputAfterStart: boolean;
  /**
   * The session's canonical events (`run_started` first, carrying
   * `provider_session_id` as soon as it is known), one at a time, ending
   * when the turn ends. Read once. Never throws for a malformed line of the
   * agent's output: an adapter reports what it cannot parse as an event, or
   * drops it.
   */
  readonly events: AsyncIterable<ProviderEvent>;
  /**
   * The agent process the session runs, for a provider that runs one (an
   * agent CLI): its pid, start time and the id in its environment, known
   * once it started. The runner records it, so that a runner killed
   * mid-attempt is followed by one that stops what it left running.
   */
  readonly agentProcess?: Promise<AgentProcessRef>;
  /**
   * Ends the turn as soon as possible (a CLI adapter signals its child's
   * process group); the stream then ends, and the thread can be resumed.
   * Idempotent, never throws.
   */
  interrupt(): void;
  /**
   * Writes a steer to the live session (send_input lane only): `text` is the
   * operator's words; the session adds what its agent needs around them (the
   * instruction to carry on with the unchanged task, a restated task). The
   * steer is delivered only once the returned delivery is acknowledged.
   *
   * @throws {TurnOverError} when the turn is over: the steer waits for the
   * prompt's next session.
   * @throws {Error} when the session does not take it: the steer is then
   * refused, never fatal.
   */
  send(text: string): Promise<SteerReceipt>;
  /**
   * Releases the session's resources: the child process group is ended
   * (politely, then killed), pipes closed, temp files kept for a resume.
   * Idempotent; called after the stream ended or was abandoned.
   */
  close(): Promise<void>;
}

/**
 * The lane a steer takes on a session.
 *
 * @example Usage
 * ```ts
 * import { steerLane } from "./provider.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(steerLane({ acceptsInputAfterStart: true }), "send_input");
 * ```
 */
export function steerLane(
  session: Pick<Session, "acceptsInputAfterStart">,
): SteerLane {
  return session.acceptsInputAfterStart ? "send_input" : "interrupt_and_resume";
}

/** An agent CLI adapter. */
export interface Provider {
  /** The provider's name as packets spell it (`simulated`, `claude`, …). */
  readonly name: string;
  /** The model used when a packet names none. */
  readonly defaultModel: string;
  /**
   * Starts a session for an attempt: the agent runs `request.text` in
   * `request.cwd`. Resolves once the session is live (its events may still
   * be on their way).
   *
   * @throws {Error} when the agent cannot start (a missing binary): the
   * attempt fails as `start_failed`.
   */
  start(request: SessionRequest): Promise<Session>;
  /**
   * Resumes a session's thread with `request.text`, after a steer on the
   * interrupt lane (`cause: "steer"`) or a resumeable failure
   * (`cause: "failure"`). The new session's `run_started` carries the same
   * `provider_session_id`.
   *
   * @throws {Error} when the thread cannot be resumed.
   */
  resume(meta: SessionMeta, request: ResumeRequest): Promise<Session>;
}
