/**
 * The plane's notifier: the run's `notify:` rules delivered off the hot
 * path, each outcome a `notified` entry of the audit log (written through
 * the plane's log writer, like every other entry).
 *
 * @module
 */

import { Notifier } from "../notify/notifier.ts";
import type { RunOpenInfo } from "../shared/run_hooks.ts";
import type { PlaneContext } from "./_plane_context.ts";

/**
 * How long the end of a run waits for notifications still under way
 * before it stops them: the grace, never more.
 */
export const NOTIFY_GRACE_MS = 3_000;

/** A notifier for the run's rules, or `null` when it has none. */
export function planeNotifier(
  info: RunOpenInfo,
  ctx: PlaneContext,
): Notifier | null {
  const rules = info.notify ?? [];
  if (rules.length === 0) return null;
  return new Notifier({
    rules,
    run: {
      run_id: info.run_id,
      state_root: info.state_root ?? ctx.paths.root,
      packet: info.packet,
      packet_dir: info.packet_dir,
    },
    record: (record) =>
      ctx.appendLog({
        run_id: ctx.runId,
        request_id: null,
        command: "notified",
        params: record.params,
        author: "runner",
        outcome: record.outcome,
        reason: record.reason,
        prompt_id: record.prompt_id,
        attempt: record.attempt,
      }),
    warn: (key, message) => ctx.warn(`notify:${key}`, message),
  });
}
