/**
 * What became of a request, as the file transport tells it: read from the
 * audit log, the receipts and `requests/`, never touching the run.
 *
 * @module
 */

import { join } from "node:path";
import { NotFoundError } from "../shared/errors.ts";
import { readTextIfExists } from "../shared/files.ts";
import { type Outcome, readLogFile } from "./log_entry.ts";
import { controlPaths, type RunRef } from "./paths.ts";
import { readReceipt } from "./receipt.ts";

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
 * Tells what became of a request from the state root's files: the final
 * outcome once one is logged, else its receipt, else `pending` while it
 * waits in `requests/`.
 *
 * @throws {NotFoundError} when the state root holds no trace of the request.
 */
export async function readRequestOutcome(
  ref: RunRef,
  requestId: string,
): Promise<RequestOutcome> {
  const paths = controlPaths(ref.state_root);
  const entries = (await readLogFile(paths)).filter((entry) =>
    entry.request_id === requestId
  );
  const final = entries.findLast((entry) =>
    entry.outcome === "applied" || entry.outcome === "rejected"
  );
  const name = `${requestId}.json`;
  const latest = final ?? entries.at(-1);
  if (latest !== undefined) {
    return {
      request_id: requestId,
      command: latest.command,
      outcome: latest.outcome,
      final: final !== undefined,
      reason: latest.reason,
      at: latest.at,
    };
  }
  const receipt = await readReceipt(paths, name);
  if (receipt !== null) {
    return {
      request_id: requestId,
      command: receipt.command,
      outcome: receipt.outcome,
      final: receipt.outcome !== "accepted",
      reason: receipt.reason,
      at: receipt.recorded_at,
    };
  }
  const waiting = await readTextIfExists(join(paths.requests, name), {
    within: paths.root,
  }).catch(() => null);
  if (waiting !== null) return pendingOutcome(requestId);
  throw new NotFoundError(
    `No request ${JSON.stringify(requestId)} in state root "${ref.state_root}"`,
    { code: "REQUEST_NOT_FOUND" },
  );
}
