/**
 * What became of a request, read through the run's transport, never
 * touching the run.
 *
 * @module
 */

import type { RequestOutcome } from "./_file_outcome.ts";
import { transportOf } from "./_transport_of.ts";
import type { RunRef } from "./paths.ts";

export type { RequestOutcome } from "./_file_outcome.ts";

/**
 * Tells what became of a request: the final outcome (`applied` or
 * `rejected`) once one exists, a steer's `accepted` while it waits for its
 * lane, or `pending` while the runner has not consumed it. Reads never
 * touch the run.
 *
 * Requires `--allow-read` permission.
 *
 * @param ref The run the request was sent to.
 * @param requestId The id `setView` or `steer` returned.
 * @returns The outcome.
 * @throws {NotFoundError} when the state root holds no trace of the request.
 *
 * @example Usage
 * ```ts ignore
 * import { currentRun, requestOutcome, steer } from "@prompt-runner/prompt-runner";
 *
 * const ref = await currentRun("examples/demo/.prompt_runner");
 * const { request_id } = await steer(ref, "Keep it short");
 * console.log((await requestOutcome(ref, request_id)).outcome);
 * ```
 */
export async function requestOutcome(
  ref: RunRef,
  requestId: string,
): Promise<RequestOutcome> {
  return await transportOf(ref).requestOutcome(ref, requestId);
}
