/**
 * The provider interface: what the runner needs from an agent CLI adapter.
 *
 * @module
 */

import type { AttemptMode, ProviderEvent } from "../shared/events.ts";

export type { AttemptMode };

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
  /** Tools the agent may use, or `null` for the provider's default. */
  allowed_tools: string[] | null;
  /** The agent's permission mode, or `null` for the provider's default. */
  permission_mode: string | null;
  /** The simulated provider's script (other providers ignore it). */
  script: unknown;
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

/** A live provider session: one turn of the agent. */
export interface Session {
  /** The handles needed to resume this session. */
  readonly meta: SessionMeta;
  /**
   * Whether text can be written to the live session (the send_input lane);
   * otherwise a steer interrupts the turn and resumes the thread.
   */
  readonly acceptsInputAfterStart: boolean;
  /** The session's events, one at a time, ending when the turn ends. */
  readonly events: AsyncIterable<ProviderEvent>;
  /** Ends the turn at the next event boundary; the thread can be resumed. */
  interrupt(): void;
  /** Writes text to the live session. Only when `acceptsInputAfterStart`. */
  send(text: string): Promise<void>;
  /** Releases the session's resources. */
  close(): Promise<void>;
}

/** An agent CLI adapter. */
export interface Provider {
  /** The provider's name as packets spell it (`simulated`, `claude`, …). */
  readonly name: string;
  /** The model used when a packet names none. */
  readonly defaultModel: string;
  /**
   * Checks a prompt's provider-specific settings before a run starts.
   *
   * @returns A problem in words, or `null` when the prompt is fine.
   */
  checkScript(script: unknown): string | null;
  /** Starts a session for an attempt. */
  start(request: SessionRequest): Promise<Session>;
  /** Resumes a session's thread, after a steer or a resumeable failure. */
  resume(meta: SessionMeta, request: ResumeRequest): Promise<Session>;
}
