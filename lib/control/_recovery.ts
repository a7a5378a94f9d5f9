/**
 * What a plane opening finishes for an earlier runner process of the state
 * root that died mid-way: requests it decided but did not finish, and
 * steers it accepted but never delivered or refused.
 *
 * @module
 */

import { deliveredSteers } from "./_interventions.ts";
import { type LogScan, scanLog } from "./_log_scan.ts";
import type { PlaneContext } from "./_plane_context.ts";
import type { LogEntry } from "./log_entry.ts";
import type { RequestInbox } from "./request_inbox.ts";
import { ensurePrivateDir, repairTornTail } from "../shared/files.ts";
import { openStateRoot } from "../shared/state_root.ts";
import { parseViewSettings } from "../shared/view.ts";
import { RUNNER_STOPPED_REASON } from "./_run_end_reason.ts";

/**
 * Finishes the requests an earlier process decided (its receipt stands:
 * the log entry is written if missing and the file removed), reading the
 * log once, and only when it can tell something: a request half done, a
 * run that continues (its views), or a last runner that did not end
 * cleanly (`cleanEnd` false: its steers may be orphaned).
 */
export async function recoverRequests(
  ctx: PlaneContext,
  inbox: RequestInbox,
  continued: boolean,
  cleanEnd: boolean,
): Promise<LogScan> {
  const leftovers = await inbox.decidedLeftovers();
  if (leftovers.size === 0 && !continued && cleanEnd) {
    // Nothing the log could add: no request half done, no view to replay,
    // and the last runner ended cleanly, having finished its steers (and
    // the one before it had its orphans finished by that runner's open).
    return { view: {}, openSteers: new Map(), logged: new Map() };
  }
  const ids = new Set([...leftovers.values()].map((r) => r.request_id));
  const scan = await ctx.guard(() =>
    scanLog(ctx.paths, ctx.runId, ids, continued)
  );
  for (const [name, receipt] of leftovers) {
    const entry = await inbox.finishDecided(
      name,
      receipt,
      scan.logged.get(receipt.request_id),
    );
    if (entry?.command === "steer" && entry.outcome === "accepted") {
      scan.openSteers.set(receipt.request_id, entry as LogEntry);
    } else if (
      continued && entry?.command === "set_view" &&
      entry.outcome === "applied" && entry.run_id === ctx.runId
    ) {
      // Logged only now, it was applied before the crash: it holds.
      try {
        scan.view = { ...scan.view, ...parseViewSettings(entry.params) };
      } catch {
        // An applied view was valid when applied.
      }
    }
  }
  return scan;
}

/** Gives every accepted steer without a final entry its final entry. */
export async function finishOrphanedSteers(
  ctx: PlaneContext,
  open: ReadonlyMap<string, Omit<LogEntry, "v" | "at">>,
): Promise<void> {
  if (open.size === 0) return;
  const delivered = new Set<string>();
  for (const ids of (await deliveredSteers(ctx.paths, null)).values()) {
    for (const id of ids) delivered.add(id);
  }
  for (const [id, entry] of open) {
    const wasDelivered = delivered.has(id);
    await ctx.appendLog({
      ...entry,
      outcome: wasDelivered ? "applied" : "rejected",
      reason: wasDelivered ? null : RUNNER_STOPPED_REASON,
    });
  }
}

/**
 * Makes the state root and the control directory private and usable: the
 * folders made (0700), dot-temps of dead writers removed, a log line torn
 * by a crash ended.
 */
export async function prepareControlDir(
  ctx: PlaneContext,
  inbox: RequestInbox,
): Promise<void> {
  const paths = ctx.paths;
  await openStateRoot(paths.root, {
    create: true,
    repair: true,
    warn: (message) => ctx.warn("root-mode", message),
  });
  for (
    const dir of [paths.dir, paths.requests, paths.outcomes, paths.archive]
  ) {
    await ctx.guard(() => ensurePrivateDir(dir, ctx.within));
  }
  await inbox.cleanTemps();
  await ctx.guard(() => repairTornTail(paths.log, ctx.within));
}
