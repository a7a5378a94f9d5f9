/**
 * Changing a live run's view from another process.
 *
 * @module
 */

import { parseViewSettings, type ViewSettings } from "../shared/view.ts";
import { transportOf } from "./_transport_of.ts";
import type { RunRef } from "./paths.ts";
import type { RequestOptions, SentRequest } from "./request.ts";

/**
 * Asks a live run to change its view. The settings are checked first and a
 * bad one is refused at once; the request is then written durably and the
 * runner applies it at its next event boundary (see `log` for the outcome).
 *
 * Requires `--allow-read`, `--allow-write`, `--allow-env`, and
 * `--allow-sys=uid` for the default author.
 *
 * @param ref The run.
 * @param settings The settings to change (any subset).
 * @param options Who asks.
 * @returns The request's id, once the request is durable (accepted for
 * delivery, not yet applied).
 * @throws {UsageError} for an unknown setting, a bad value (naming the
 * allowed ones), or no setting at all.
 * @throws {StateError} when the run is not running.
 *
 * @example A bad value is refused at once; an ended run refuses the rest
 * ```ts
 * import {
 *   currentRun,
 *   runPacket,
 *   setView,
 *   StateError,
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
 * await assert.rejects(setView(ref, { thinking: "maybe" }), UsageError);
 * await assert.rejects(setView(ref, { thinking: "hide" }), StateError);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function setView(
  ref: RunRef,
  settings: Partial<ViewSettings> | Record<string, unknown>,
  options: RequestOptions = {},
): Promise<SentRequest> {
  const view = parseViewSettings(settings);
  return await transportOf(ref).submit(ref, {
    ...options,
    command: "set_view",
    params: { ...view },
  });
}
