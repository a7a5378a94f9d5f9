/**
 * What an agent CLI adapter (`claude.ts`, `codex.ts`, `gemini.ts`, `amp.ts`)
 * supplies to the shared CLI-process core (`cli_session.ts`): how to build
 * its argv, how to read its stdout, and how to write live input to it.
 *
 * The core does everything else the same way for every CLI: it finds the
 * binary, spawns it in the prompt's repo in its own process group with an
 * explicit environment and a per-attempt `TMPDIR`, closes stdin unless the
 * session takes live input, emits `run_started` with the session id, keeps
 * non-JSON lines in the transcript, interrupts (SIGINT to the group, a grace
 * period, then SIGKILL), and turns an exit without a terminal event into a
 * `transport_disconnect` failure carrying the exit code and stderr's tail.
 * After the core signalled the process (a steer, a timeout, an interrupted
 * run) the exit code and the CLI's "aborted" result are not failures.
 *
 * @module
 */

import type { AgentOptions } from "../packet/agent_options.ts";
import type { ProviderEvent } from "../shared/events.ts";

export type { AgentOptions };

/** What an argv is built from. */
export interface CliInvocation {
  /** The prompt's text (start), or the steer or "continue" text (resume). */
  text: string;
  /** The working directory (the prompt's repo). */
  cwd: string;
  /** The model, or `null` for the CLI's default. */
  model: string | null;
  /** The prompt's validated `agent:` options. */
  options: AgentOptions;
  /**
   * Whether the session takes live input on stdin (the send_input lane):
   * the text is then written to stdin as the first frame, not put on argv.
   */
  liveInput: boolean;
  /**
   * What is left of the run's money budget (US dollars), for a CLI with a
   * ceiling of its own (Claude's `--max-budget-usd`); absent: none.
   */
  maxBudgetUsd?: number;
}

/** A failure a CLI reported, in the runner's failure classes. */
export interface CliFailure {
  /**
   * The failure class (`provider_auth_claim`, `provider_rate_limit`,
   * `provider_capacity`, `transport_disconnect`, `protocol_error`,
   * `approval_denied`, `provider_config_claim`, `provider_runtime_claim`…).
   */
  kind: string;
  /** The CLI's own words. */
  message: string;
}

/** What one stdout line told the parser. */
export interface LineResult {
  /** Canonical events (never `run_started`: the core emits it). */
  events: ProviderEvent[];
  /** The session (thread) id, when this line carries one. */
  session_id?: string;
  /** The model the CLI reports, when this line names it. */
  model?: string;
  /** This line ends a turn (`result`, `turn.completed`, `turn.failed`…). */
  terminal?: boolean;
  /**
   * The CLI cannot go on (Amp's interactive login flow): the core reports
   * the failure and kills the process group at once.
   */
  fatal?: CliFailure;
  /** The id of a live-input frame this line echoes (Claude's replay). */
  echoed?: string;
}

/** How the process ended. */
export interface CliExit {
  /** The exit code, or `null` when a signal killed it. */
  code: number | null;
  /** The signal that killed it, or `null`. */
  signal: string | null;
  /** The last lines of stderr. */
  stderr: string[];
  /** Whether the core signalled it (a steer, a timeout, an interrupted run). */
  interrupted: boolean;
  /** Whether a terminal line was seen. */
  sawTerminal: boolean;
}

/** Reads one process's stdout; a new parser per process. */
export interface CliParser {
  /**
   * Reads one stdout line.
   *
   * @param text The line, without its newline.
   * @param json The line parsed as JSON, or `undefined` when it is not JSON
   * (the core keeps such a line in the transcript either way).
   */
  line(text: string, json: unknown): LineResult;
  /**
   * The process ended. Returns the failure its exit means (Gemini's exit 41
   * is an auth failure), or `null` to let the core decide: nothing after a
   * terminal line or a signal of ours, else `transport_disconnect`.
   */
  exit(info: CliExit): CliFailure | null;
}

/** Frames to write to a CLI's stdin, and the id its echo will carry. */
export interface CliFrames {
  /** The frames (JSON lines). */
  frames: string[];
  /** The id of the frame whose echo proves the CLI took it. */
  echo: string;
}

/** Live input for the send_input lane (Claude's `--input-format stream-json`). */
export interface CliInput {
  /** The frames (JSON lines) that start a turn with `text`. */
  prompt(text: string): string[];
  /**
   * The frames that preempt the turn in flight with `text`; the CLI then
   * ends the aborted turn with a terminal line and runs the steer's turn,
   * echoing the steer's frame (`LineResult.echoed`) as that turn takes it.
   */
  steer(text: string): CliFrames;
}

/** An agent CLI's profile. */
export interface CliProfile {
  /** The provider's name as packets spell it (`claude`). */
  readonly name: string;
  /** The binary's name on `PATH` (`claude`). */
  readonly binName: string;
  /** The model shown when the packet names none (the CLI picks its own). */
  readonly defaultModel: string;
  /**
   * Whether a session takes live input (the send_input lane), a transport
   * fact: Claude does when steering is allowed (`max_steers > 0`) and
   * `steer_lane` is not `resume`; the others never do.
   */
  liveInput(options: AgentOptions, maxSteers: number): boolean;
  /** The argv (without the binary) that starts a session. */
  startArgs(invocation: CliInvocation): string[];
  /** The argv that resumes session `sessionId` with `invocation.text`. */
  resumeArgs(invocation: CliInvocation, sessionId: string): string[];
  /** Environment the CLI needs on top of the runner's and `agent.env`. */
  env?(invocation: CliInvocation): Record<string, string>;
  /** A parser for one process's stdout. */
  parser(): CliParser;
  /** Live input frames, for a CLI that has a send_input lane. */
  readonly input?: CliInput;
}
