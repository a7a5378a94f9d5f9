/**
 * The status rollup's shapes: what `prompt_runner status --json` prints
 * (DESIGN §10), and what is read from a state root to fold into it.
 *
 * @module
 */

import type { AmendmentRecord } from "../control/amendment_log.ts";
import type { LogEntry } from "../control/log_entry.ts";
import type { Snapshot } from "../control/snapshot.ts";
import type { StateFile } from "./state_file.ts";
import type { RunLockInfo } from "../shared/mod.ts";
import type { Attention, BudgetSpending } from "../shared/snapshot_schema.ts";

/** The run's state, in the words of DESIGN §10 (snake_case in JSON). */
export type RunWord =
  | "never_run"
  | "running"
  | "completed"
  | "failed"
  | "interrupted"
  | "runner_gone";

/** One unmet verifier item. */
export interface UnmetItem {
  /** The contract clause. */
  clause: string;
  /** The item's label (a path, a command). */
  label: string;
  /** Failed, or could not be checked. */
  status: "fail" | "fault";
  /** Why. */
  reason: string;
}

/** The most recent steer request of the run. */
export interface LastSteer {
  /** When it was logged. */
  at: string;
  /** Who sent it. */
  author: string | null;
  /** What it said. */
  text: string | null;
  /** The prompt it was for. */
  prompt_id: string | null;
  /** Its latest logged outcome. */
  outcome: string;
  /** Why, for a refusal. */
  reason: string | null;
}

/** The most recent amendment of the state root. */
export interface LastAmendment {
  /** When it was recorded. */
  at: string;
  /** Who made it. */
  author: string;
  /** The prompt it changed. */
  prompt_id: string;
  /** `add` (amend) or `relax`. */
  direction: string;
  /** The clause it changed. */
  clause: string;
  /** `add`, `drop` or `replace`. */
  operation: string;
  /** Why. */
  reason: string;
}

/** `prompt_runner status --json`: every field always present. */
export interface StatusRollup {
  /** The format's version. */
  v: 1;
  /** What to name to continue the run (workspace id, packet or state root). */
  target: string;
  /** The workspace, when the state root is one's. */
  workspace_id: string | null;
  /** The state root. */
  state_root: string;
  /** The newest run: id, status word, start, length, who started it. */
  run: {
    id: string | null;
    status: RunWord;
    started_at: string | null;
    elapsed_ms: number | null;
    started_by: string | null;
  };
  /** The selected prompts: how many, completed, failed, the current one. */
  progress: {
    selected: number | null;
    completed: number | null;
    failed: number | null;
    current: { id: string | null; name: string | null };
  };
  /** The current prompt's attempt: number, mode and what led to it. */
  attempt: {
    number: number | null;
    mode: string | null;
    detail: string | null;
  };
  /** The last verification of the current prompt. */
  verifier: { passed: boolean | null; unmet: UnmetItem[] };
  /** Provider activity: name, model, last event age, tokens, cost. */
  provider: {
    name: string | null;
    model: string | null;
    last_event_age_ms: number | null;
    input_tokens: number | null;
    output_tokens: number | null;
    cost_usd: number | null;
  };
  /** Steers delivered in the run, and the last one asked for. */
  steers: { count: number; last: LastSteer | null };
  /** Amendments of the state root, and the newest. */
  amendments: { count: number; last: LastAmendment | null };
  /** The agent CLI's process. */
  service: { agent_pid: number | null; alive: boolean | null };
  /** The runner's lease on the state root. */
  lease: {
    state: "alive" | "gone" | "other_host" | "none";
    pid: number | null;
    host: string | null;
  };
  /** Why the run needs a person, since when (`null`: it does not). */
  attention: Attention | null;
  /** The spending limits in force and what is spent against each (`null`: none). */
  budget: BudgetSpending[] | null;
}

/** The last event line of the state root's stream. */
export interface LastEvent {
  at: string;
  type: string;
  run_id: string;
  data: Record<string, unknown>;
}

/** What `gather_status.ts` read. */
export interface StatusInputs {
  target: string;
  workspace_id: string | null;
  state_root: string;
  /** The packet's prompts, in order (`null`: the packet is not known). */
  packet_prompts: { id: string; name: string }[] | null;
  snapshot: Snapshot | null;
  state: StateFile;
  lock: { info: RunLockInfo | null; alive: boolean } | null;
  last_event: LastEvent | null;
  /** Steers delivered in the snapshot's run (its interventions). */
  delivered_steers: number;
  /** The snapshot's run's audit log entries. */
  log: LogEntry[];
  amendments: AmendmentRecord[];
  /** Whether the agent CLI's process is alive (`null`: not checked). */
  agent_alive: boolean | null;
  /** This host's name. */
  host: string;
}
