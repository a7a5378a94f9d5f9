/**
 * Changing a live run's view from another process.
 *
 * @module
 */

import { parseViewSettings, type ViewSettings } from "../shared/view.ts";
import type { RunRef } from "./paths.ts";
import {
  type RequestOptions,
  requireRunning,
  type SentRequest,
  writeRequest,
} from "./request.ts";

/**
 * Asks a live run to change its view. The settings are checked first and a
 * bad one is refused at once; the request is then written durably and the
 * runner applies it at its next event boundary (see `log` for the outcome).
 *
 * Requires `--allow-read`, `--allow-write` and `--allow-env=USER`, and
 * `--allow-run` to check the runner's process.
 *
 * @param ref The run.
 * @param settings The settings to change (any subset).
 * @param options Who asks.
 * @returns The request's id, once the request is durable (accepted for
 * delivery, not yet applied).
 * @throws {UsageError} for an unknown setting, a bad value (naming the
 * allowed ones), or no setting at all.
 * @throws {StateError} when the run is not running.
 */
export async function setView(
  ref: RunRef,
  settings: Partial<ViewSettings> | Record<string, unknown>,
  options: RequestOptions = {},
): Promise<SentRequest> {
  const view = parseViewSettings(settings);
  await requireRunning(ref);
  return await writeRequest(ref, "set_view", { ...view }, options);
}
