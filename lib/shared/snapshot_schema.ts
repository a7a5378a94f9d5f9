/**
 * The snapshot's schema (`control/snapshot.json`, DESIGN §5): its type and
 * its field list, for the writer, the readers and the audits alike.
 *
 * @module
 */

import type { AttemptMode, AttentionReason, RunStatus } from "./events.ts";
import type { ViewSettings } from "./view.ts";

/** Why the run needs a person, since when (`attention_needed`). */
export interface Attention {
  /** The reason (`failed`, `stalled`, `budget_exhausted`, …). */
  reason: AttentionReason;
  /** When it was raised (ISO 8601). */
  since: string;
  /** The prompt it concerns (`null`: the run). */
  prompt_id: string | null;
  /** Its attempt. */
  attempt: number | null;
  /** What happened, in words. */
  detail: string;
}

/** One spending limit in force on the current prompt, and its spend. */
export interface BudgetSpending {
  /** The limit (`max_cost_usd`, `max_input_tokens`, `max_output_tokens`). */
  key: "max_cost_usd" | "max_input_tokens" | "max_output_tokens";
  /** Whose limit: the run's (manifest) or the prompt's own. */
  scope: "run" | "prompt";
  /** The limit: US dollars or tokens. */
  limit: number;
  /** What was spent against it: by the run, or by the prompt. */
  spent: number;
}

/** A run's state as the control plane publishes it. */
export interface Snapshot {
  /** The schema version. */
  v: 1;
  /** The run's id. */
  run_id: string;
  /** The packet's name. */
  packet: string;
  /** The packet directory. */
  packet_dir: string;
  /** `running` until the run ends, then how it ended. */
  status: "running" | RunStatus;
  /** The current (or last) prompt. */
  prompt_id: string | null;
  /** Its name. */
  prompt_name: string | null;
  /** Its attempt number in this run. */
  attempt: number | null;
  /** Its attempt's mode. */
  mode: AttemptMode | null;
  /** The provider running it. */
  provider: string | null;
  /** The model in use. */
  model: string | null;
  /** When the run started (ISO 8601). */
  run_started_at: string;
  /** When the current attempt started. */
  prompt_started_at: string | null;
  /** When this snapshot was written: a heartbeat while the run lives. */
  updated_at: string;
  /** Milliseconds since the run started. */
  elapsed_ms: number;
  /** Milliseconds since the current attempt started. */
  prompt_elapsed_ms: number;
  /** Tool calls started in the current attempt. */
  tool_count: number;
  /** Input tokens reported in the current attempt. */
  input_tokens: number;
  /** Output tokens reported in the current attempt. */
  output_tokens: number;
  /** The cost the agent reported for the current attempt, in US dollars (`null`: none reported). */
  cost_usd: number | null;
  /** The agent CLI's process id in the current attempt (`null`: none, or not a CLI). */
  agent_pid: number | null;
  /**
   * That process's start time (field 22 of `/proc/<pid>/stat`; `null`: not
   * known): the pid, reused by another process once the agent is gone, is
   * not taken for the agent.
   */
  agent_pid_start: string | null;
  /** Events observed in this run. */
  event_count: number;
  /** The `seq` of the last event recorded. */
  last_seq: number;
  /** Steers delivered to the current prompt in this run. */
  steer_count: number;
  /** The current prompt's steer budget. */
  max_steers: number;
  /** The view in force. */
  view: ViewSettings;
  /** The runner's process id. */
  pid: number;
  /** The runner's host. */
  host: string;
  /** Who started the run (`null`: not recorded). */
  started_by: string | null;
  /** The prompt ids the run selected, in order (`null`: not recorded). */
  prompt_ids: string[] | null;
  /**
   * Why the run needs a person (`null`: it does not): set by
   * `attention_needed`, cleared when the next attempt starts or, for a
   * stall, when events come again.
   */
  attention: Attention | null;
  /** The spending limits in force on the current prompt (`null`: none). */
  budget: BudgetSpending[] | null;
}

/**
 * Every field of a snapshot, as the type declares them: a
 * snapshot missing one was not written by this version's plane.
 */
export const SNAPSHOT_FIELDS = [
  "v",
  "run_id",
  "packet",
  "packet_dir",
  "status",
  "prompt_id",
  "prompt_name",
  "attempt",
  "mode",
  "provider",
  "model",
  "run_started_at",
  "prompt_started_at",
  "updated_at",
  "elapsed_ms",
  "prompt_elapsed_ms",
  "tool_count",
  "input_tokens",
  "output_tokens",
  "cost_usd",
  "agent_pid",
  "agent_pid_start",
  "event_count",
  "last_seq",
  "steer_count",
  "max_steers",
  "view",
  "pid",
  "host",
  "started_by",
  "prompt_ids",
  "attention",
  "budget",
] as const satisfies readonly (keyof Snapshot)[];

/** A field of a snapshot. */
export type SnapshotField = typeof SNAPSHOT_FIELDS[number];

// The list names every field: adding one to Snapshot without listing it
// here fails the type check.
const listed: Record<Exclude<keyof Snapshot, SnapshotField>, never> = {};
void listed;
