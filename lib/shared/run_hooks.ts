/**
 * The narrow interface between the runner and whatever observes and steers
 * it (the control plane): the runner reports, and between events it asks for
 * commands to apply before the next event.
 *
 * @module
 */

import type { AttemptMode } from "./events.ts";
import type { RunEvent, RunStatus } from "./events.ts";
import type { ViewSettings } from "./view.ts";
import type { NotifyRule } from "./notify_rule.ts";
import type { AttentionReason } from "./events.ts";
import type { BudgetSpending } from "./snapshot_schema.ts";

/** What the runner tells its hooks when a run opens. */
export interface RunOpenInfo {
  /** The run's id. */
  run_id: string;
  /** The packet's name. */
  packet: string;
  /** The packet directory. */
  packet_dir: string;
  /** The state root, or `null` for an in-memory run. */
  state_root: string | null;
  /** The view the run starts with. */
  view: ViewSettings;
  /** The packet's steer budget per prompt. */
  max_steers: number;
  /** The prompt ids the run will attempt, in order. */
  prompt_ids: string[];
  /** The provider of the first prompt. */
  provider: string;
  /** The model of the first prompt. */
  model: string;
  /** Who started the run (`$USER`, else the account name); absent: unknown. */
  started_by?: string;
  /**
   * The run's `notify:` rules (the packet's, then its workspace's); absent
   * or empty: no notifications.
   */
  notify?: NotifyRule[];
}

/** What the hooks tell the runner back when a run opens. */
export interface RunOpened {
  /** The last event `seq` already recorded for this run id (0 for a new run). */
  last_seq: number;
  /**
   * View changes an earlier process of the same run id applied, replayed on
   * top of the starting view (empty for a new run).
   */
  view: Partial<ViewSettings>;
  /** Steers already delivered in this run id, per prompt. */
  delivered_steers: Record<string, number>;
  /**
   * Set when this run id's stream already ends with a final `run_finished`
   * (`completed`, `failed`, `blocked`: an earlier process was killed after
   * publishing its end, before its last snapshot): the run is over, with
   * this status, and must not go on.
   */
  finished?: RunStatus;
  /**
   * Set when this run id's stream ends with `run_finished {status:
   * interrupted}`: the run goes on after it (`run --resume`), in the same
   * stream.
   */
  interrupted?: boolean;
}

/** What the runner tells its hooks when an attempt starts. */
export interface PromptStartInfo {
  /** The prompt's id. */
  prompt_id: string;
  /** The prompt's name. */
  name: string;
  /** The attempt number within this run. */
  attempt: number;
  /** The attempt's mode. */
  mode: AttemptMode;
  /** The provider running it. */
  provider: string;
  /** The model in use. */
  model: string;
  /** The prompt's steer budget for this run. */
  max_steers: number;
}

/** A command to change the view, applied at the next event boundary. */
export interface SetViewCommand {
  /** The command name. */
  command: "set_view";
  /** The settings to change. */
  view: Partial<ViewSettings>;
  /** The request that asked for it. */
  request_id: string;
  /** Who asked. */
  author: string;
}

/** A command to steer the agent, delivered on the provider's lane. */
export interface SteerCommand {
  /** The command name. */
  command: "steer";
  /** The steer's text. */
  text: string;
  /** The prompt the steer is for. */
  prompt_id: string;
  /** The request that asked for it. */
  request_id: string;
  /** Who asked. */
  author: string;
}

/**
 * The hooks saw something that needs a person (a steer refused because the
 * prompt's steer budget is spent): the runner emits `attention_needed`.
 */
export interface AttentionCommand {
  /** The command name. */
  command: "attention";
  /** Why. */
  reason: AttentionReason;
  /** The prompt it concerns. */
  prompt_id: string | null;
  /** What happened, in words. */
  detail: string;
  /** The request whose refusal it is. */
  request_id: string;
}

/** A command the hooks hand the runner at a boundary. */
export type BoundaryCommand = SetViewCommand | SteerCommand | AttentionCommand;

/** How a steer's delivery went. */
export interface SteerResult {
  /** The steer command. */
  command: SteerCommand;
  /** Whether the lane delivered it. */
  delivered: boolean;
  /** The lane that delivered it, when it was. */
  delivery?: "send_input" | "interrupt_and_resume";
  /**
   * What delivered it, when it was: the agent's acknowledgement
   * (`stdin_echo`, `turn_steer`, `turn_start`, `acp_prompt`, `resume`,
   * `simulated`).
   */
  mechanism?: string;
  /** When the agent acknowledged it (ISO 8601), when it was delivered. */
  acknowledged_at?: string;
  /** Why it was refused, when it was. */
  reason?: string;
  /** The attempt it was delivered to (or refused in). */
  attempt: number | null;
  /** The provider whose lane delivered (or refused) it. */
  provider: string | null;
}

/** What the control plane plugs into the runner. Every member is optional. */
export interface RunHooks {
  /** The run opened; the hooks report the last `seq` already recorded. */
  open?(info: RunOpenInfo): Promise<RunOpened>;
  /** An attempt started. */
  promptStarted?(info: PromptStartInfo): Promise<void>;
  /** An event happened (called before it is rendered). */
  observe?(event: RunEvent): Promise<void>;
  /**
   * The runner is between events: return the commands to apply before the
   * next event. `idle` is true when no event is flowing (verification, a
   * retry delay).
   */
  boundary?(context: { idle: boolean }): Promise<BoundaryCommand[]>;
  /** A steer was delivered or refused by its lane. */
  steerSettled?(result: SteerResult): Promise<void>;
  /**
   * How many steers were delivered to a prompt in this run id. The hooks
   * (the control plane's steer ledger) are the one owner of that count; the
   * runner asks instead of counting.
   */
  steerCount?(promptId: string): number;
  /** The view changed. */
  viewChanged?(view: ViewSettings): Promise<void>;
  /**
   * The spending limits in force on the current prompt and what is spent
   * against them (`null`: none), as an attempt starts and as usage comes.
   */
  budgetChanged?(budget: BudgetSpending[] | null): void;
  /** The run ended. */
  close?(status: RunStatus): Promise<void>;
  /**
   * The runner stops without finishing the run (its environment failed: a
   * full disk): files are closed, no end is published, and the run can be
   * resumed, as after a crash.
   */
  abandon?(): Promise<void>;
  /**
   * The runner found a link where it writes in the state root and moved it
   * aside instead of following it: record why.
   */
  linkRefused?(refusal: LinkRefusal): Promise<void>;
}

/** A link the runner moved aside instead of following. */
export interface LinkRefusal {
  /** The link's path, relative to the state root. */
  path: string;
  /** A symbolic link, or a hard link (a file also named elsewhere). */
  kind: "symbolic" | "hard";
  /** Where a symbolic link pointed, or `null`. */
  target: string | null;
  /** Where it was moved, relative to the state root. */
  moved_to: string;
}
