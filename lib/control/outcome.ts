/**
 * What became of a request, as every transport tells it: its outcome from
 * the run's audit log once it is there, or pending.
 *
 * @module
 */

import type { LogEntry, Outcome } from "./log_entry.ts";

/** What became of a request. */
export interface RequestOutcome {
  /** The request's id. */
  request_id: string;
  /** Its command, once decided (`null` while it waits). */
  command: string | null;
  /**
   * `pending` while it waits in `requests/`; `accepted` while a steer waits
   * for its lane; then `applied` or `rejected`, which are final.
   */
  outcome: Outcome | "pending";
  /** Whether the outcome is final. */
  final: boolean;
  /** Why it was refused, or a note. */
  reason: string | null;
  /** When the outcome was recorded, or `null` while pending. */
  at: string | null;
}

/** The outcome of a request no runner has taken yet. */
export function pendingOutcome(requestId: string): RequestOutcome {
  return {
    request_id: requestId,
    command: null,
    outcome: "pending",
    final: false,
    reason: null,
    at: null,
  };
}

/**
 * A request's outcome as the audit log tells it: its final entry
 * (`applied` or `rejected`) once there is one, else its latest (a steer's
 * `accepted`); `null` when the log has none.
 */
export function loggedOutcome(
  entries: readonly LogEntry[],
  requestId: string,
): RequestOutcome | null {
  const mine = entries.filter((entry) => entry.request_id === requestId);
  const final = mine.findLast((entry) =>
    entry.outcome === "applied" || entry.outcome === "rejected"
  );
  const latest = final ?? mine.at(-1);
  if (latest === undefined) return null;
  return {
    request_id: requestId,
    command: latest.command,
    outcome: latest.outcome,
    final: final !== undefined,
    reason: latest.reason,
    at: latest.at,
  };
}
