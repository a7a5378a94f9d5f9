/**
 * The layout of a state root, named once: every entry prompt_runner makes
 * at its top and in its `control/` directory (DESIGN §5), where a packet
 * keeps its default one, and what the state home holds for workspaces.
 * Every module that reads or writes one of these paths takes its name from
 * here.
 *
 * @module
 */

import { join } from "./posix_path.ts";

/**
 * The entries at the top of a state root: the run lock and state
 * (`run_lock.ts`, `status/state_file.ts`), a workspace's tag
 * (`workspace/registry.ts`), the control plane, the delivered steers and
 * the amendments (`control/`), transcripts (`runner/transcript.ts`) and
 * the agents' temporary directories (`runner/session_driver.ts`).
 */
export const STATE_ROOT_NAMES = {
  /** `run.lock`: who runs, and liveness. */
  lock: "run.lock",
  /** `state.json`: each prompt's status and attempts. */
  state: "state.json",
  /** `state_root.json`: a workspace's tag, saying whose root it is. */
  tag: "state_root.json",
  /** `control/`: the control plane. */
  control: "control",
  /** `interventions/`: one JSONL file per prompt of delivered steers. */
  interventions: "interventions",
  /** `amendments/`: one JSONL file per prompt of amendments. */
  amendments: "amendments",
  /** `logs/`: per-attempt transcripts, by run id. */
  logs: "logs",
  /** `tmp/`: the agents' temporary directories, one per attempt. */
  tmp: "tmp",
} as const;

/** The entries in a state root's `control/`. */
export const CONTROL_NAMES = {
  /** `requests/`: one JSON file per pending command. */
  requests: "requests",
  /** `outcomes/`: one receipt per processed request. */
  outcomes: "outcomes",
  /** `log.jsonl`: the audit log of every command. */
  log: "log.jsonl",
  /** `snapshot.json`: the run's current state. */
  snapshot: "snapshot.json",
  /** `events.jsonl`: the current run's events. */
  events: "events.jsonl",
  /** `events/`: earlier runs' events, by run id. */
  archive: "events",
} as const;

/** Which top entries are files and which directories. */
export const STATE_ROOT_ENTRIES: Readonly<Record<string, "file" | "dir">> = {
  [STATE_ROOT_NAMES.lock]: "file",
  [STATE_ROOT_NAMES.state]: "file",
  [STATE_ROOT_NAMES.tag]: "file",
  [STATE_ROOT_NAMES.amendments]: "dir",
  [STATE_ROOT_NAMES.control]: "dir",
  [STATE_ROOT_NAMES.interventions]: "dir",
  [STATE_ROOT_NAMES.logs]: "dir",
  [STATE_ROOT_NAMES.tmp]: "dir",
};

/** The folder, inside a packet directory, that is its default state root. */
export const STATE_DIR_NAME = ".prompt_runner";

/** What the state home holds for workspaces (DESIGN §10). */
export const STATE_HOME_NAMES = {
  /** `workspaces/<id>/`: a workspace's default state root. */
  workspaces: "workspaces",
  /** `workspaces.json`: the registry of prepared workspaces. */
  registry: "workspaces.json",
} as const;

/** The paths of a state root's entries. */
export interface StateRootPaths {
  /** The state root. */
  root: string;
  /** `control/`. */
  dir: string;
  /** `control/requests/`: one JSON file per pending command. */
  requests: string;
  /** `control/outcomes/`: one receipt per processed request. */
  outcomes: string;
  /** `control/log.jsonl`: the audit log of every command. */
  log: string;
  /** `control/snapshot.json`: the run's current state. */
  snapshot: string;
  /** `control/events.jsonl`: the current run's events. */
  events: string;
  /** `control/events/`: earlier runs' events, by run id. */
  archive: string;
  /** `interventions/`: one JSONL file per prompt of delivered steers. */
  interventions: string;
  /** `amendments/`: one JSONL file per prompt of amendments. */
  amendments: string;
  /** `run.lock`. */
  lock: string;
  /** `state.json`. */
  state: string;
  /** `state_root.json`. */
  tag: string;
  /** `logs/`: per-attempt transcripts, by run id. */
  logs: string;
  /** `tmp/`: the agents' temporary directories. */
  tmp: string;
}

/**
 * Returns the paths of a state root's entries.
 *
 * @example Usage
 * ```ts
 * import { stateRootPaths } from "./state_root_layout.ts";
 * import assert from "node:assert/strict";
 *
 * const paths = stateRootPaths("/srv/pr/ops");
 * assert.equal(paths.snapshot, "/srv/pr/ops/control/snapshot.json");
 * assert.equal(paths.lock, "/srv/pr/ops/run.lock");
 * ```
 */
export function stateRootPaths(stateRoot: string): StateRootPaths {
  const top = (name: keyof typeof STATE_ROOT_NAMES) =>
    join(stateRoot, STATE_ROOT_NAMES[name]);
  const dir = top("control");
  const control = (name: keyof typeof CONTROL_NAMES) =>
    join(dir, CONTROL_NAMES[name]);
  return {
    root: stateRoot,
    dir,
    requests: control("requests"),
    outcomes: control("outcomes"),
    log: control("log"),
    snapshot: control("snapshot"),
    events: control("events"),
    archive: control("archive"),
    interventions: top("interventions"),
    amendments: top("amendments"),
    lock: top("lock"),
    state: top("state"),
    tag: top("tag"),
    logs: top("logs"),
    tmp: top("tmp"),
  };
}
