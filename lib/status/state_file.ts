/**
 * `state.json`: each prompt's status, attempt history and last result,
 * replaced atomically after every change.
 *
 * @module
 */

import { join } from "node:path";
import type { AttemptMode } from "../shared/events.ts";
import { errorText, StateError } from "../shared/errors.ts";
import { readStateText, writeFileAtomic } from "../shared/files.ts";
import type { VerifyReport } from "../verify/report.ts";
import { STATE_ROOT_NAMES } from "../shared/state_root_layout.ts";

/** The state file's name inside a state root. */
export const STATE_FILE = STATE_ROOT_NAMES.state;

/** How one attempt ended (or `running` while it runs). */
export type AttemptStatus =
  | "running"
  | "completed"
  | "failed"
  | "verification_failed"
  | "verifier_fault"
  | "interrupted";

/** Where a prompt stands. */
export type PromptStatus =
  | "running"
  | "completed"
  | "failed"
  | "verification_failed"
  | "verifier_fault"
  | "retry_scheduled"
  | "repairing"
  | "blocked"
  | "interrupted";

/** A prompt's last verification, counted. */
export interface VerifierCounts {
  /** Whether it passed. */
  passed: boolean;
  /** How many items it checked. */
  items: number;
  /** How many failed. */
  failures: number;
  /** How many faulted. */
  faults: number;
}

/** What an attempt's agent reported using. */
export interface AttemptUsage {
  /** Input tokens. */
  input_tokens: number;
  /** Output tokens. */
  output_tokens: number;
  /** Cost in US dollars, or `null` when the agent reported none. */
  cost_usd: number | null;
}

/**
 * The agent CLI process an attempt ran last, recorded as soon as it
 * started: a runner killed mid-attempt leaves it behind, and the next run
 * of the state root stops it before it starts anything.
 */
export interface AgentRecord {
  /** The provider whose CLI it is. */
  provider: string;
  /** Its pid, which is also its process group id. */
  pid: number;
  /** Its start time (field 22 of `/proc/<pid>/stat`; `null`: unknown): a reused pid is never taken for it. */
  pid_start: string | null;
  /** The host it ran on. */
  host: string;
  /** `PROMPT_RUNNER_AGENT_ID=…` in its environment, which the processes it starts inherit. */
  env: string | null;
}

/** One attempt of a prompt. */
export interface AttemptRecord {
  /** The run that made the attempt. */
  run_id: string;
  /** The attempt number within that run. */
  attempt: number;
  /** How the attempt came about. */
  mode: AttemptMode;
  /** How it ended. */
  status: AttemptStatus;
  /** When it started (ISO 8601). */
  started_at: string;
  /** When it ended, or `null` while it runs. */
  finished_at: string | null;
  /** How many times the session was resumed after a failure. */
  resumes: number;
  /** The provider failure's class, when the provider failed. */
  failure_class: string | null;
  /**
   * The tokens and cost the agent reported over the attempt's sessions
   * (`cost_usd` is `null` when it reported none); absent in older states.
   */
  usage?: AttemptUsage;
  /** Why the attempt ended as it did. */
  reason: string | null;
  /** The verifier's report, when verification ran. */
  verifier: VerifyReport | null;
  /** The attempt's transcript, relative to the state root. */
  transcript: string | null;
  /** Its agent CLI process (absent for the simulated provider, and in older states). */
  agent?: AgentRecord;
}

/** A prompt's state and result. */
export interface PromptState {
  /** Where the prompt stands. */
  status: PromptStatus;
  /** The prompt's name. */
  name: string;
  /** The run that last touched the prompt. */
  run_id: string;
  /** When the prompt's state last changed. */
  updated_at: string;
  /** Every attempt, across runs, oldest first. */
  attempts: AttemptRecord[];
  /** The latest verifier report. */
  last_verifier: VerifyReport | null;
  /** The latest provider failure's class. */
  failure_class: string | null;
  /** Why the prompt ended as it did. */
  reason: string | null;
  /** The prompts it waited for, when blocked. */
  blocked_by?: string[];
  /** Whether a steer was delivered while the prompt ran. */
  steered?: boolean;
  /** How many steers were delivered (only when steered). */
  steer_count?: number;
  /** The interventions file, relative to the state root (only when steered). */
  interventions_file?: string;
  /** Whether amendments were enforced. */
  amended?: boolean;
  /** The amendments enforced. */
  amendments?: unknown[];
  /** The amendments file, relative to the state root (only when amended). */
  amendments_file?: string;
}

/** The content of `state.json`. */
export interface StateFile {
  /** The schema version. */
  v: 1;
  /** The latest run that used this state root. */
  run_id: string | null;
  /** When the file last changed. */
  updated_at: string | null;
  /** Each prompt's state, by id. */
  prompts: Record<string, PromptState>;
}

/** A new attempt's record: running since `at`. */
export function startedAttempt(
  runId: string,
  attempt: number,
  mode: AttemptMode,
  at: string,
): AttemptRecord {
  return {
    run_id: runId,
    attempt,
    mode,
    status: "running",
    started_at: at,
    finished_at: null,
    resumes: 0,
    failure_class: null,
    reason: null,
    verifier: null,
    transcript: null,
  };
}

/**
 * Records what a dead runner left `running` (it was killed, or its machine
 * went down) as interrupted at `at`: its attempts, and its prompts still
 * running, waiting for a retry or repairing.
 */
export function settleDeadAttempts(state: StateFile, at: string): void {
  for (const entry of Object.values(state.prompts)) {
    for (const record of entry.attempts) {
      if (record.status !== "running") continue;
      record.status = "interrupted";
      record.finished_at ??= at;
      record.reason =
        "the runner stopped during this attempt (killed, or its machine went down)";
    }
    if (
      entry.status === "running" || entry.status === "retry_scheduled" ||
      entry.status === "repairing"
    ) {
      entry.status = "interrupted";
      entry.reason = "the runner stopped before the prompt finished";
    }
  }
}

/** An empty state. */
export function emptyState(): StateFile {
  return { v: 1, run_id: null, updated_at: null, prompts: {} };
}

/**
 * Reads a state root's `state.json`.
 *
 * @returns The state; an empty one when the file does not exist.
 * @throws {StateError} when the file is not valid JSON or not a state object.
 */
export async function readState(stateRoot: string): Promise<StateFile> {
  const path = join(stateRoot, STATE_FILE);
  const text = await readStateText(path, stateRoot, {
    name: "state",
    code: "STATE_UNREADABLE",
    hint:
      "It must be the file the runner wrote; move it aside to start the packet's history afresh",
  });
  if (text === null) return emptyState();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateError(
      `Cannot read state "${path}": ${errorText(error)}`,
      {
        code: "STATE_CORRUPT",
        hint: "Move the file aside to start the packet's history afresh",
      },
    );
  }
  if (
    typeof value !== "object" || value === null ||
    typeof (value as StateFile).prompts !== "object" ||
    (value as StateFile).prompts === null
  ) {
    throw new StateError(
      `Cannot read state "${path}": it is not a prompt_runner state object`,
      { code: "STATE_CORRUPT" },
    );
  }
  return value as StateFile;
}

/** Writes a state root's `state.json` atomically. */
export async function writeState(
  stateRoot: string,
  state: StateFile,
): Promise<void> {
  state.updated_at = new Date().toISOString();
  await writeFileAtomic(
    join(stateRoot, STATE_FILE),
    JSON.stringify(state, null, 2) + "\n",
    { within: stateRoot },
  );
}
