/**
 * Is a run's runner still there? The snapshot heartbeat answers cheaply;
 * the run lock (process id and start time) answers for sure.
 *
 * @module
 */

import { readRunLock } from "../shared/run_lock.ts";
import type { RunRef } from "./paths.ts";
import type { Snapshot } from "./snapshot.ts";

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
