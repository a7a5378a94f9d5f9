/**
 * Steering a live run's agent from another process.
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";
import type { RunRef } from "./paths.ts";
import {
  type RequestOptions,
  type RequestReceipt,
  requireRunning,
  writeRequest,
} from "./request.ts";

/** Options for {@linkcode steer}. */
export interface SteerOptions extends RequestOptions {
  /** The prompt the steer is for; refused by the runner if another one runs. */
  promptId?: string;
}

/**
 * Asks a live run to steer its agent: the text changes how the agent works,
 * never the contract. The runner delivers it on the provider's lane (written
 * to the live session, or the turn is interrupted and the thread resumed
 * with the text) within the prompt's steer budget.
 *
 * Requires `--allow-read`, `--allow-write` and `--allow-env=USER`, and
 * `--allow-run` to check the runner's process.
 *
 * @param ref The run.
 * @param text What to tell the agent.
 * @param options Who asks, and which prompt the steer is for.
 * @returns The request's id, once the request is durable (accepted for
 * delivery, not yet delivered).
 * @throws {UsageError} for an empty steer or a malformed prompt id.
 * @throws {StateError} when the run is not running.
 */
export async function steer(
  ref: RunRef,
  text: string,
  options: SteerOptions = {},
): Promise<RequestReceipt> {
  const trimmed = text.trim();
  if (trimmed === "") {
    throw new UsageError("A steer needs something to say: the text is empty", {
      code: "EMPTY_STEER",
    });
  }
  let promptId: string | undefined;
  if (options.promptId !== undefined) {
    if (!/^\d+$/.test(options.promptId.trim())) {
      throw new UsageError(
        `Invalid prompt id ${
          JSON.stringify(options.promptId)
        }: expected digits such as "01"`,
        { code: "INVALID_PROMPT_ID" },
      );
    }
    promptId = String(Number(options.promptId.trim())).padStart(2, "0");
  }
  await requireRunning(ref);
  return await writeRequest(ref, "steer", { text: trimmed }, {
    ...options,
    ...(promptId === undefined ? {} : { prompt_id: promptId }),
  });
}
