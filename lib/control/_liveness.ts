/**
 * Is a run's runner still there? The snapshot heartbeat answers cheaply;
 * the run lock (process id and start time) answers for sure.
 *
 * @module
 */

import { RunLostError } from "../shared/errors.ts";
import { readRunLock } from "../shared/run_lock.ts";
import { controlPaths, type RunRef } from "./paths.ts";
import { readSnapshotFile, type Snapshot } from "./snapshot.ts";

/** A heartbeat older than this sends the follower to check the run lock. */
const STALE_HEARTBEAT_MS = 5000;

/**
 * Tells whether the runner of `ref` is gone. A fresh heartbeat means alive;
 * otherwise the run lock decides (missing, dead, or another run's lock means
 * gone).
 */
export async function runnerGone(
  ref: RunRef,
  current: Snapshot,
): Promise<boolean> {
  const age = Date.now() - Date.parse(current.updated_at);
  if (Number.isFinite(age) && age < STALE_HEARTBEAT_MS) return false;
  const lock = await readRunLock(ref.state_root);
  if (lock === null || lock.info === null) return true;
  if (lock.info.run_id !== ref.run_id) return true;
  return !lock.alive;
}

/** Where a followed run stands, from its snapshot and its runner. */
export type RunState =
  | { state: "running" }
  | { state: "superseded"; by: string | null }
  | { state: "ended"; status: string }
  | { state: "gone"; pid: number };

/** Reads where a followed run stands (cheap unless its heartbeat is stale). */
export async function followedRunState(ref: RunRef): Promise<RunState> {
  const now = await readSnapshotFile(
    controlPaths(ref.state_root).snapshot,
    ref.state_root,
  )
    .catch(() => null);
  if (now === null || now.run_id !== ref.run_id) {
    return { state: "superseded", by: now?.run_id ?? null };
  }
  if (now.status !== "running") return { state: "ended", status: now.status };
  if (await runnerGone(ref, now)) return { state: "gone", pid: now.pid };
  return { state: "running" };
}

/** The error for a runner that stopped without finishing its run. */
export function runnerGoneError(ref: RunRef, pid: number): RunLostError {
  return new RunLostError(
    `The runner of run ${ref.run_id} (pid ${pid}) is gone: it stopped without finishing the run`,
  );
}
