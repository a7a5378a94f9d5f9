/**
 * What became of a request, as the file transport tells it: read from the
 * audit log, the receipts and `requests/`, never touching the run.
 *
 * @module
 */

import { join } from "node:path";
import { NotFoundError } from "../shared/errors.ts";
import { readTextIfExists } from "../shared/files.ts";
import { readLogFile } from "./log_entry.ts";
import { loggedOutcome, type RequestOutcome } from "./outcome.ts";

import { controlPaths, type RunRef } from "./paths.ts";
import { readReceipt } from "./receipt.ts";
import { pendingOutcome } from "./outcome.ts";

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
  const logged = loggedOutcome(await readLogFile(paths), requestId);
  if (logged !== null) return logged;
  const name = `${requestId}.json`;
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
