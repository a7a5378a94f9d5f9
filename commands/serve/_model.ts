/**
 * What the dashboard's pages show (issue 12): plain data the server gathers
 * through the client API (`mod.ts`) and the pages render. The server owns
 * gathering, the pages own rendering; this file is their contract.
 *
 * @module
 */

import type {
  ContractView,
  LogEntry,
  LogVerification,
  RunEvent,
  RunWord,
  Snapshot,
  ViewSettings,
} from "../../mod.ts";
import type { AttemptOutcome, RowData } from "./page/shared.ts";

/** One row of the runs page (the page's `RowData`, its words typed). */
export interface RunRow extends RowData {
  /** Where the run stands (a fleet run that went silent: `unreachable`). */
  status: RunWord | "unreachable";
  /**
   * The runner's lease: alive, gone, on another host, or none; for a fleet
   * run, alive while the fleet hears from it, else unreachable or none.
   */
  runner: "alive" | "gone" | "other_host" | "none" | "unreachable";
}

export type { AttemptOutcome };

/** One attempt on the timeline: its span of events and how it ended. */
export interface TimelineAttempt {
  /** The attempt's number within its prompt. */
  number: number;
  /** `run`, `retry` or `repair`. */
  mode: string;
  /** How it ended (`running` while it runs). */
  outcome: AttemptOutcome;
  /** The seq of its first and last event. */
  first_seq: number;
  last_seq: number;
}

/** A steer or an amendment on the timeline. */
export interface TimelineMark {
  /** What it is. */
  kind: "steer" | "amendment";
  /** The seq it happened at (the event that reported it). */
  seq: number;
  /** Its text or summary, for the title. */
  text: string;
}

/** One prompt's row on the timeline. */
export interface PromptTimeline {
  /** The prompt's id. */
  id: string;
  /** Its name, when known. */
  name: string | null;
  /** Its attempts in this run, in order. */
  attempts: TimelineAttempt[];
  /** Steers and amendments, in order. */
  marks: TimelineMark[];
}

/** One event as the studio renderer shows it: plain text, no escapes. */
export interface RenderedEvent {
  /** The event's seq. */
  seq: number;
  /** The event's type. */
  type: string;
  /** The rendered lines (possibly none: the view hides the event). */
  lines: string[];
  /** The event itself, when it changes the timeline (a run page folds it). */
  event?: RunEvent;
}

/** A request's outcome to show after a form post without JavaScript. */
export interface ShownOutcome {
  /** What was asked. */
  action: "steer" | "view" | "amend" | "relax";
  /** `applied`, `accepted`, `rejected`, `recorded`, `refused` or `pending`. */
  outcome: string;
  /** Why, for a rejection or refusal. */
  reason: string | null;
}

/** Everything the run page shows. */
export interface RunPageModel {
  /** The row of this run (status, progress, …). */
  row: RunRow;
  /** The state root's path. */
  state_root: string;
  /** The packet's directory, when known (contract actions need it). */
  packet_dir: string | null;
  /** The run's live snapshot, when there is one. */
  snapshot: Snapshot | null;
  /** The view the run renders with now. */
  view: ViewSettings;
  /** The packet's prompts, in order. */
  prompts: { id: string; name: string | null }[];
  /** The per-prompt timeline. */
  timeline: PromptTimeline[];
  /** The newest events, rendered (at most a few hundred). */
  events: RenderedEvent[];
  /** How many earlier events are not shown. */
  earlier: number;
  /** The control log of this run. */
  log: LogEntry[];
  /**
   * Whether the state root's audit trail holds (`control log --verify`);
   * `null` (or absent) for a fleet run, whose files are on its own machine.
   */
  chain?: LogVerification | null;
  /** Each prompt's contract: packet vs enforced, with amendments. */
  contracts: ContractView[];
  /** The outcome of the form just posted, when the URL names one. */
  outcome: ShownOutcome | null;
}

/** What every page needs besides its data. */
export interface PageContext {
  /** The author web actions are recorded under (`web:<name>`). */
  author: string;
  /** The fleet the dashboard shows, its secrets masked (`null`: none). */
  fleet?: string | null;
}
