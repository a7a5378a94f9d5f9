/**
 * `snapshot.json`: the run's current state, replaced atomically, and the
 * client reads of it.
 *
 * @module
 */

import { NotFoundError, StateError } from "../shared/errors.ts";
import type { AttemptMode, RunStatus } from "../shared/events.ts";
import { readTextIfExists } from "../shared/files.ts";
import type { ViewSettings } from "../shared/view.ts";
import { controlPaths, type RunRef } from "./paths.ts";

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
}

/** Reads a snapshot file, or `null` when there is none. */
export async function readSnapshotFile(path: string): Promise<Snapshot | null> {
  const text = await readTextIfExists(path);
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateError(
      `Cannot read snapshot "${path}": ${(error as Error).message}`,
      { code: "SNAPSHOT_CORRUPT" },
    );
  }
  if (
    typeof value !== "object" || value === null ||
    typeof (value as Snapshot).run_id !== "string"
  ) {
    throw new StateError(
      `Cannot read snapshot "${path}": it is not a run snapshot`,
      { code: "SNAPSHOT_CORRUPT" },
    );
  }
  return value as Snapshot;
}

/**
 * Returns a reference to the newest run recorded in a state root, running or
 * finished.
 *
 * Requires `--allow-read` permission.
 *
 * @param stateRoot The state root (`PACKET/.prompt_runner` for a packet run).
 * @returns The run's reference.
 * @throws {NotFoundError} when no run was ever recorded there.
 *
 * @example Usage
 * ```ts
 * import { currentRun } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const root = await Deno.makeTempDir();
 * await assert.rejects(currentRun(root), /No run recorded/);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function currentRun(stateRoot: string): Promise<RunRef> {
  const snapshot = await readSnapshotFile(controlPaths(stateRoot).snapshot);
  if (snapshot === null) {
    throw new NotFoundError(`No run recorded in state root "${stateRoot}"`, {
      code: "RUN_NOT_FOUND",
      hint: "Start one with 'prompt_runner run PACKET'",
    });
  }
  return { state_root: stateRoot, run_id: snapshot.run_id };
}

/**
 * Reads a run's snapshot. Reads never touch the run.
 *
 * Requires `--allow-read` permission.
 *
 * @param ref The run.
 * @returns Its snapshot.
 * @throws {NotFoundError} when the state root has no run.
 * @throws {StateError} when a newer run has replaced this one (a stale ref).
 */
export async function snapshot(ref: RunRef): Promise<Snapshot> {
  const current = await readSnapshotFile(controlPaths(ref.state_root).snapshot);
  if (current === null) {
    throw new NotFoundError(
      `No run recorded in state root "${ref.state_root}"`,
      {
        code: "RUN_NOT_FOUND",
      },
    );
  }
  if (current.run_id !== ref.run_id) {
    throw new StateError(
      `Run ${ref.run_id} is no longer the current run of "${ref.state_root}": run ${current.run_id} replaced it`,
      { code: "STALE_RUN" },
    );
  }
  return current;
}
