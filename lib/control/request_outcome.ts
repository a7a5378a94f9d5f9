/**
 * What became of a request: read from the audit log, the receipts and
 * `requests/`, never touching the run.
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
 * @example A steer sent to a live run, pending, then applied
 * ```ts
 * import {
 *   currentRun,
 *   requestOutcome,
 *   runPacket,
 *   snapshot,
 *   steer,
 * } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_slow.prompt.md`,
 *   "---\nsimulate: {attempts: [{repeat: 40, delay_ms: 50, messages: [working]}]}\n---\nWork.\n",
 * );
 * const run = runPacket(dir, { output: { write: () => Promise.resolve() } });
 * const root = `${dir}/.prompt_runner`;
 * for (;;) {
 *   const ref = await currentRun(root).catch(() => null);
 *   if (ref !== null && (await snapshot(ref)).status === "running") break;
 *   await new Promise((resolve) => setTimeout(resolve, 20));
 * }
 * const ref = await currentRun(root);
 * const { request_id } = await steer(ref, "Keep it short", { author: "ada" });
 * assert.equal((await requestOutcome(ref, request_id)).request_id, request_id);
 * await run;
 * const outcome = await requestOutcome(ref, request_id);
 * assert.equal(outcome.outcome, "applied");
 * assert.equal(outcome.final, true);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function requestOutcome(
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
  if (waiting !== null) {
    return {
      request_id: requestId,
      command: null,
      outcome: "pending",
      final: false,
      reason: null,
      at: null,
    };
  }
  throw new NotFoundError(
    `No request ${JSON.stringify(requestId)} in state root "${ref.state_root}"`,
    { code: "REQUEST_NOT_FOUND" },
  );
}
