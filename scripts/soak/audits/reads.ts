/**
 * The soak's checks of what its clients read: every status read whole,
 * every seq seen once and in order by every follower. Exported so tests can
 * plant violations and see each one fire.
 *
 * @module
 */

import { isEvent, SNAPSHOT_FIELDS } from "../../_audit/mod.ts";
import type { CliResult, Violations } from "../../_harness/mod.ts";
import { errorText } from "../../../lib/shared/errors.ts";

/**
 * Checks one `control status --json` read: exit 0, one line, one JSON
 * object with every snapshot field.
 *
 * @returns What is wrong, or `null`.
 */
export function checkStatusRead(result: CliResult): string | null {
  if (result.code !== 0) {
    return `exit ${result.code}: ${result.stderr.trim().slice(0, 200)}`;
  }
  if (
    !result.stdout.endsWith("\n") ||
    result.stdout.indexOf("\n") !== result.stdout.length - 1
  ) {
    return `not exactly one line: ${
      JSON.stringify(result.stdout.slice(0, 200))
    }`;
  }
  let value: unknown;
  try {
    value = JSON.parse(result.stdout);
  } catch (error) {
    return `not JSON (${errorText(error)}): ${result.stdout.slice(0, 200)}`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `not a JSON object: ${result.stdout.slice(0, 200)}`;
  }
  const missing = SNAPSHOT_FIELDS.filter((key) => !(key in value));
  if (missing.length > 0) return `missing fields: ${missing.join(", ")}`;
  const snap = value as Record<string, unknown>;
  if (
    !["running", "completed", "failed", "blocked", "interrupted"].includes(
      String(snap.status),
    )
  ) return `unknown status ${JSON.stringify(snap.status)}`;
  if (!Number.isInteger(snap.last_seq)) {
    return `last_seq is not a whole number: ${JSON.stringify(snap.last_seq)}`;
  }
  return null;
}

/**
 * What one follower expects next: each run's seqs once, in order, from 1.
 * Feed it every line a `control events --json` prints.
 */
export class FollowTracker {
  /** The run being followed. */
  runId: string | null = null;
  /** The next seq expected. */
  next = 1;
  /** Seqs seen per run. */
  readonly seen = new Map<string, number>();
  /** Runs whose `run_finished` was seen. */
  readonly finished = new Set<string>();

  /** Starts following a run from seq 1. */
  follow(runId: string): void {
    this.runId = runId;
    this.next = 1;
  }

  /**
   * Takes one printed line.
   *
   * @returns What is wrong with it, or `null`.
   */
  see(line: string): string | null {
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line);
    } catch {
      return `not JSON: ${line.slice(0, 120)}`;
    }
    if (event.run_id !== this.runId) {
      return `an event of run ${event.run_id} while following ${this.runId}`;
    }
    const seq = event.seq;
    if (!Number.isInteger(seq)) return `no seq: ${line.slice(0, 120)}`;
    const run = this.runId!;
    this.seen.set(run, (this.seen.get(run) ?? 0) + 1);
    if (isEvent(event, "run_finished")) this.finished.add(run);
    if (seq === this.next) {
      this.next++;
      return null;
    }
    const problem = (seq as number) < this.next
      ? `run ${run}: seq ${seq} again (expected ${this.next})`
      : `run ${run}: seq ${seq} after ${this.next - 1} (skipped ${this.next}..${
        (seq as number) - 1
      })`;
    if ((seq as number) > this.next) this.next = (seq as number) + 1;
    return problem;
  }
}

/**
 * Every follower saw every run it followed whole: as many seqs as the
 * stream holds, up to `run_finished`.
 */
export function checkFollowerCoverage(
  trackers: readonly FollowTracker[],
  runs: ReadonlyMap<string, { last: number; finished: string | null }>,
  violations: Violations,
): void {
  trackers.forEach((tracker, i) => {
    for (const [runId, run] of runs) {
      const seen = tracker.seen.get(runId) ?? 0;
      if (seen !== run.last) {
        violations.add(
          "followers saw every seq",
          `follower ${i + 1}: ${seen} of run ${runId}'s ${run.last} events`,
        );
      }
    }
  });
}
