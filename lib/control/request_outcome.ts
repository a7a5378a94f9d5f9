/**
 * What became of a request, read through the run's transport, never
 * touching the run.
 *
 * @module
 */

import type { RequestOutcome } from "./outcome.ts";
import { transportOf } from "./_transport_of.ts";
import type { RunRef } from "./paths.ts";

export type { RequestOutcome } from "./outcome.ts";

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
  return await transportOf(ref).requestOutcome(ref, requestId);
}
