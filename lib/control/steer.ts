/**
 * Steering a live run's agent from another process.
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";
import { transportOf } from "./_transport_of.ts";
import type { RunRef } from "./paths.ts";
import {
  MAX_REQUEST_BYTES,
  type RequestOptions,
  type SentRequest,
} from "./request.ts";
import { checkPromptId } from "../shared/prompt_id.ts";

/** Options for {@linkcode steer}. */
export interface SteerOptions extends RequestOptions {
  /** The prompt the steer is for; refused by the runner if another one runs. */
  promptId?: string;
}

/**
 * The largest steer, in bytes as the request stores it (UTF-8, JSON-escaped):
 * the request limit less room for the rest of the request.
 */
export const MAX_STEER_BYTES: number = MAX_REQUEST_BYTES - 4 * 1024;

const encoder = new TextEncoder();

/**
 * Checks a steer's text before anything else is done (no run is looked for,
 * nothing is written), and returns it trimmed.
 *
 * @param text What to tell the agent.
 * @returns The trimmed text.
 * @throws {UsageError} for an empty steer, or one larger than
 * {@linkcode MAX_STEER_BYTES}.
 *
 * @example Usage
 * ```ts
 * import { checkSteerText, MAX_STEER_BYTES } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(checkSteerText("  keep it short\n"), "keep it short");
 * assert.throws(() => checkSteerText(" "), /the text is empty/);
 * assert.throws(() => checkSteerText("x".repeat(MAX_STEER_BYTES + 1)), /too large/);
 * ```
 */
export function checkSteerText(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") {
    throw new UsageError("A steer needs something to say: the text is empty", {
      code: "EMPTY_STEER",
    });
  }
  // What the request stores: the JSON string without its quotes. Quick
  // bound first, so a huge text is not encoded twice.
  const size = trimmed.length > MAX_STEER_BYTES
    ? encoder.encode(trimmed).length
    : encoder.encode(JSON.stringify(trimmed)).length - 2;
  if (size > MAX_STEER_BYTES) {
    throw new UsageError(
      `The steer is too large: ${size} bytes, the limit is ${MAX_STEER_BYTES} bytes`,
      {
        code: "STEER_TOO_LARGE",
        hint: "Say it in fewer words; a steer is guidance, not a document",
      },
    );
  }
  return trimmed;
}

/**
 * Asks a live run to steer its agent: the text changes how the agent works,
 * never the contract. The runner delivers it on the provider's lane (written
 * to the live session, or the turn is interrupted and the thread resumed
 * with the text) within the prompt's steer budget. The text is checked
 * (empty, too large) before the run is looked at.
 *
 * Requires `--allow-read`, `--allow-write`, `--allow-env`, and
 * `--allow-sys=uid` for the default author.
 *
 * @param ref The run.
 * @param text What to tell the agent.
 * @param options Who asks, and which prompt the steer is for.
 * @returns The request's id, once the request is durable (accepted for
 * delivery, not yet delivered).
 * @throws {UsageError} for an empty steer, one larger than
 * {@linkcode MAX_STEER_BYTES}, or a malformed prompt id.
 * @throws {StateError} when the run is not running.
 *
 * @example An empty steer is refused before the run is looked at
 * ```ts
 * import {
 *   currentRun,
 *   runPacket,
 *   StateError,
 *   steer,
 *   UsageError,
 * } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(`${dir}/prompt_runner_packet.md`, "---\nprovider: simulated\n---\n");
 * await Deno.writeTextFile(`${dir}/prompts/01_hi.prompt.md`, "---\nverify: {}\n---\nHi.\n");
 * await runPacket(dir, { output: { write: () => Promise.resolve() } });
 * const ref = await currentRun(`${dir}/.prompt_runner`);
 * await assert.rejects(steer(ref, "   "), UsageError);
 * await assert.rejects(steer(ref, "use the v2 API", { author: "ada" }), StateError);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function steer(
  ref: RunRef,
  text: string,
  options: SteerOptions = {},
): Promise<SentRequest> {
  const trimmed = checkSteerText(text);
  let promptId: string | undefined;
  if (options.promptId !== undefined) {
    promptId = checkPromptId(options.promptId);
  }
  const { promptId: _named, ...rest } = options;
  return await transportOf(ref).submit(ref, {
    ...rest,
    command: "steer",
    params: { text: trimmed },
    ...(promptId === undefined ? {} : { prompt_id: promptId }),
  });
}
