/**
 * What a caller gives `runPacket` and what it gets back.
 *
 * @module
 */

import type { Contract } from "../packet/contract.ts";
import type { AttemptMode } from "../providers/provider.ts";
import type { RunEvent, RunStatus } from "../shared/events.ts";
import type { RunHooks, RunOpened, RunOpenInfo } from "../shared/run_hooks.ts";
import type { ViewSettings } from "../shared/view.ts";
import type { EnforcedContract } from "../contract/enforced_contract.ts";
import type { PromptStatus } from "../status/state_file.ts";

/** Where a run writes what it renders. */
export interface RunOutput {
  /** Writes text; the caller decides where it goes (stdout, a buffer). */
  write(text: string): Promise<void>;
  /** Write NDJSON canonical events instead of rendered text. */
  json?: boolean;
  /** Keep ANSI styling (otherwise it is stripped). */
  color?: boolean;
}

/** Options for `runPacket`. */
export interface RunPacketOptions {
  /** Prompt ids to run, in order; all prompts when absent or empty. */
  ids?: string[];
  /** A provider for every prompt, replacing the packet's. */
  provider?: string;
  /** A model for every prompt, replacing the packet's. */
  model?: string;
  /** View settings replacing the packet's defaults. */
  view?: Partial<ViewSettings>;
  /**
   * The state root. Absent: the packet's `.prompt_runner/`. `null`: an
   * in-memory run that writes nothing to disk.
   */
  stateRoot?: string | null;
  /**
   * The prepared workspace the state root belongs to. The run then never
   * makes the state root, and refuses to start (`NotFoundError`,
   * `WORKSPACE_NOT_FOUND`) unless, with its run lock held, the root is still
   * registered for this id and tagged with it: a `workspace forget
   * --delete` racing the start wins cleanly.
   */
  workspaceId?: string;
  /** The run id; a new time-sortable id when absent. */
  runId?: string;
  /** Aborting it ends the run as `interrupted`. */
  signal?: AbortSignal;
  /** Where rendered text (or NDJSON) goes; nowhere when absent. */
  output?: RunOutput;
  /**
   * The hooks the run reports to, instead of a plane: nothing is opened and
   * `plane` is not used.
   */
  hooks?: RunHooks;
  /**
   * Opens the control plane a run with a state root reports to (the file
   * plane's `openPlane`). The runner never builds a plane itself: without
   * `hooks` and `plane` a run has no control plane. The public `runPacket`
   * passes the file plane.
   */
  plane?: OpenPlane;
  /** Where warnings go (a control directory that cannot be written). */
  warn?: (message: string) => void | Promise<void>;
  /** Called for every event, after the hooks observed it. */
  onEvent?: (event: RunEvent) => void | Promise<void>;
  /**
   * Supplies the contract to enforce at each verification, given the
   * prompt file's contract as read for it. When absent: that contract plus
   * the state root's amendments.
   */
  contract?: (
    prompt: string,
    packetContract: Contract,
  ) => Promise<EnforcedContract>;
  /**
   * How long an attempt may go without a provider event before it is a
   * stall, replacing every prompt's `progress_timeout_ms`.
   */
  progressTimeoutMs?: number;
  /** A random source for retry jitter (tests pin it). */
  random?: () => number;
  /**
   * The fleet the run publishes to (DESIGN §12), its URL's secrets masked:
   * recorded in `run.lock`.
   */
  fleet?: string;
}

/**
 * Opens a run's control plane in its state root: the hooks the run reports
 * to, and what an earlier process of the same run id left.
 */
export type OpenPlane = (
  stateRoot: string,
  info: RunOpenInfo,
  options: { warn?: (message: string) => void | Promise<void> },
) => Promise<RunHooks & { readonly opened: RunOpened }>;

/** One prompt's outcome in a run. */
export interface PromptOutcome {
  /** The prompt's final status in this run. */
  status: PromptStatus;
  /** Why, when it did not simply complete. */
  reason: string | null;
  /** The modes of the attempts made in this run. */
  attempts: AttemptMode[];
}

/** What `runPacket` returns. */
export interface RunResult {
  /** The run's id. */
  run_id: string;
  /** How the run ended. */
  status: RunStatus;
  /** Why, when it did not complete. */
  reason: string | null;
  /** The state root, or `null` for an in-memory run. */
  state_root: string | null;
  /** Each attempted prompt's outcome, by id. */
  prompts: Record<string, PromptOutcome>;
}
