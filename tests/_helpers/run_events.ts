/**
 * An in-process run of a packet that keeps its events, for runner tests.
 *
 * @module
 */

import { runPacket, type RunResult } from "../../lib/runner/mod.ts";
import type { RunEvent } from "../../lib/shared/mod.ts";

/**
 * Runs `dir` with `runPacket`, collecting every event (the caller's own
 * `onEvent` still sees each one, after it is kept).
 */
export async function runCollecting(
  dir: string,
  options: Parameters<typeof runPacket>[1] = {},
): Promise<{ result: RunResult; status: string; events: RunEvent[] }> {
  const events: RunEvent[] = [];
  const result = await runPacket(dir, {
    ...options,
    onEvent: async (event) => {
      events.push(event);
      await options.onEvent?.(event);
    },
  });
  return { result, status: result.status, events };
}
