/**
 * Is a run's runner still there? The runner holds a kernel lock on
 * `run.lock` for the life of the run: on this host, probing it answers at
 * once and for sure (a SIGKILLed runner's lock goes with it), without
 * starting a process. Without a lock record of the run (none yet, or one
 * from another host) the snapshot heartbeat answers.
 *
 * @module
 */

import { RunLostError } from "../shared/errors.ts";
import { hostname, readRunLock } from "../shared/run_lock.ts";
import { controlPaths, type RunRef } from "./paths.ts";
import { readSnapshotFile, type Snapshot } from "./snapshot.ts";

/** A heartbeat older than this, with no live lock, means the runner is gone. */
const STALE_HEARTBEAT_MS = 5000;

/**
 * Tells whether the runner of `ref` is gone. A lock record of the run on
 * this host decides by its kernel lock; otherwise a fresh heartbeat means
 * alive, and a stale one defers to the lock record (missing, dead, or
 * another run's means gone).
 */
export async function runnerGone(
  ref: RunRef,
  current: Snapshot,
): Promise<boolean> {
  const lock = await readRunLock(ref.state_root).catch(() => null);
  const ours = lock?.info?.run_id === ref.run_id;
  if (ours && lock?.info?.host === hostname()) return !lock.alive;
  const age = Date.now() - Date.parse(current.updated_at);
  if (Number.isFinite(age) && age < STALE_HEARTBEAT_MS) return false;
  if (lock === null || lock.info === null || !ours) return true;
  return !lock.alive;
}

/** Where a followed run stands, from its snapshot and its runner. */
export type RunLiveness =
  | { state: "running" }
  | { state: "superseded"; by: string | null }
  | { state: "ended"; status: string }
  | { state: "gone"; pid: number };

/** Reads where a followed run stands: its snapshot, then its run lock. */
export async function followedRunState(ref: RunRef): Promise<RunLiveness> {
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
